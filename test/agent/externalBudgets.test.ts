import { OperationError, type ExternalBudget, type SpentLimit, type ToolCall, type UsageDelta } from '../../lib/index';
import { drive } from '../helpers/drive';

const call = (id: string): ToolCall => ({ id, name: 'bash' });

function recording(
  limits: { llm?: number; tool?: number } = {},
): ExternalBudget & { log: string[]; charged: UsageDelta } {
  const log: string[] = [];
  const charged: UsageDelta = {};
  let llm = 0;
  let tool = 0;
  return {
    log,
    charged,
    async reserve(kind) {
      log.push(`reserve ${kind}`);
      const max = kind === 'llm' ? limits.llm : limits.tool;
      const used = kind === 'llm' ? llm : tool;
      if (max !== undefined && used >= max) {
        const limit = kind === 'llm' ? 'maxLlmCalls' : 'maxToolCalls';
        return {
          limit,
          used,
          max,
          message: `redis budget exceeded: ${used} ${kind} calls of ${max}`,
        } satisfies SpentLimit;
      }
      if (kind === 'llm') llm += 1;
      else tool += 1;
      return undefined;
    },
    async charge(delta) {
      log.push(`charge ${Object.keys(delta).sort().join(',')}`);
      for (const [k, v] of Object.entries(delta) as Array<[keyof UsageDelta, number]>)
        charged[k] = (charged[k] ?? 0) + v;
      return undefined;
    },
  };
}

describe('AgentWithStateMachine externalBudgets', () => {
  it('.runTurn() reserves before every LLM and tool call and charges usage as it arrives', async () => {
    const ext = recording();
    const d = drive(
      {
        replies: [
          { toolCalls: [call('c1')], usage: { inputTokens: 5, outputTokens: 1, costUsd: 0.01 } },
          { text: 'ok', usage: { costUsd: 0.02 } },
        ],
        tools: { bash: { output: 'ok' } },
      },
      { externalBudgets: [ext] },
    );
    const result = await d.adapter.runTurn('go');
    expect(result.outcome).toBe('end_of_turn');
    expect(ext.log.filter((l) => l.startsWith('reserve'))).toEqual(['reserve llm', 'reserve tool', 'reserve llm']);
    expect(ext.charged).toMatchObject({ inputTokens: 5, outputTokens: 1, costUsd: 0.03 });
    expect(ext.charged.llmCalls).toBeUndefined();
  });

  it('.runTurn() stops with budget_exceeded when a reserve returns a spent limit, answering the tool calls not run', async () => {
    const ext = recording({ tool: 1 });
    const d = drive(
      { replies: [{ toolCalls: [call('c1'), call('c2')] }], tools: { bash: { output: 'ok' } } },
      { externalBudgets: [ext] },
    );
    const result = await d.adapter.runTurn('go');
    expect(result.outcome).toBe('budget_exceeded');
    expect(result.error!.message).toBe(
      'redis budget exceeded: 1 tool calls of 1; this run: tool calls 1 after 1 LLM call',
    );
    expect(result.unansweredToolCalls!.map((u) => u.result.output)).toEqual([
      'ok',
      'not run: redis budget exceeded: 1 tool calls of 1; this run: tool calls 1 after 1 LLM call',
    ]);

    const llmCapped = drive({ replies: [{ text: 'never' }] }, { externalBudgets: [recording({ llm: 0 })] });
    const stopped = await llmCapped.adapter.runTurn('go');
    expect(stopped.outcome).toBe('budget_exceeded');
    expect(llmCapped.agent.calls).toEqual([]);
  });

  it('.runTurn() ends in Error naming the failing reserve or charge, still settling the tool calls', async () => {
    const ext = recording();
    ext.reserve = async (kind) => {
      if (kind === 'tool') throw new Error('ECONNREFUSED 127.0.0.1:6379');
      return undefined;
    };
    const d = drive({ replies: [{ toolCalls: [call('c1')] }] }, { externalBudgets: [ext] });
    const result = await d.adapter.runTurn('go');
    expect(result.outcome).toBe('error');
    expect(result.error).toBeInstanceOf(OperationError);
    expect(result.error!.message).toBe("externalBudgets[0].reserve('tool') failed: ECONNREFUSED 127.0.0.1:6379");
    expect(result.unansweredToolCalls!.map((u) => u.result.isError)).toEqual([true]);

    const charging = recording();
    charging.charge = () => Promise.reject(new Error('READONLY'));
    const c = drive({ replies: [{ text: 'hi', usage: { costUsd: 0.01 } }] }, { externalBudgets: [charging] });
    const failed = await c.adapter.runTurn('go');
    expect(failed.outcome).toBe('error');
    expect(failed.error!.message).toBe('externalBudgets[0].charge failed: READONLY');
  });

  it('new AgentWithStateMachine() rejects an external budget without reserve and charge', () => {
    expect(() => drive({ replies: [] }, { externalBudgets: [{ reserve: async () => undefined } as never] })).toThrow(
      'Expected `externalBudgets[0]` to be an object with reserve(kind) and charge(delta) methods',
    );
  });

  it('capsCost: a response of unknown cost under an external dollar cap ends the turn as under an in-process one', async () => {
    const replies = [{ toolCalls: [call('c1')], usage: { inputTokens: 5, outputTokens: 1 } }, { text: 'ok' }];
    const capped = drive(
      { replies, tools: { bash: { output: 'ok' } } },
      { externalBudgets: [{ ...recording(), capsCost: true }] },
    );
    const result = await capped.adapter.runTurn('go');
    expect(result.outcome).toBe('error');
    expect(result.error?.message).toMatch(/no costUsd .* maxCostUsd cannot be enforced/);
    // Without capsCost the same response is charged without a cost, as before.
    const plain = drive({ replies, tools: { bash: { output: 'ok' } } }, { externalBudgets: [recording()] });
    expect((await plain.adapter.runTurn('go')).outcome).toBe('end_of_turn');
  });
});
