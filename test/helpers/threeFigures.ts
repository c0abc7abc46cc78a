import { createScriptedAgent, type AgentLoop, type BatchOptions, type BatchTask, type Pricing } from '../../lib/index';

// $5 per million tokens: a call bounded at 1,000 + 1,000 tokens holds $0.01; the answer, of
// 100 + 20 tokens, is billed $0.0006.
const pricing: Pricing = (u) => ((u.inputTokens ?? 0) + (u.outputTokens ?? 0)) * 5e-6;
const bound = { inputTokens: 1000, maxOutputTokens: 1000, model: 'gpt-local' };

/**
 * A task whose one LLM call makes the three figures of money: its first attempt is refused
 * with a 429 (not billed: its $0.01 hold released), its second fails with a 500 after the
 * request left (uncertain: charged its $0.01 hold), its third is answered ($0.0006 billed).
 * Run it under `THREE_FIGURES` (a strict cap, the ledger, retries).
 */
export function threeFiguresTask(id: string, sleep: () => Promise<void> = async () => undefined): BatchTask {
  return {
    id,
    input: 'go',
    agent: (): AgentLoop => {
      const inner = createScriptedAgent({
        replies: [{ error: 'HTTP 500' }, { text: 'ok', usage: { inputTokens: 100, outputTokens: 20 } }],
        bound,
        sleep,
      });
      let calls = 0;
      return {
        ...inner,
        sendUserMessage: async (message, ctx) => {
          if (++calls === 1) throw Object.assign(new Error('429 rate limited'), { status: 429 });
          return inner.sendUserMessage(message, ctx);
        },
      };
    },
  };
}

/** The batch options `threeFiguresTask` needs: pricing, a strict cap (so calls are held), the ledger, retries. */
export const THREE_FIGURES: Pick<BatchOptions, 'pricing' | 'total' | 'ledger' | 'retry'> = {
  pricing,
  total: { maxCostUsd: 1, strict: true },
  ledger: true,
  retry: { retries: 3, shouldRetry: () => true },
};

/** What one `threeFiguresTask` run spends, as every reader says it. */
export const ONE_RUN = { costUsd: 0.0106, uncertainUsd: 0.01, releasedUsd: 0.01 };
