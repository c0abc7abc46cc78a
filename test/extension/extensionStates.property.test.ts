import fc from 'fast-check';
import {
  AgentWithStateMachine,
  APPROVAL_EXTENSION,
  COMPACTION_EXTENSION,
  DEFAULT_TABLE,
  extendTable,
  type AgentLoop,
  type LLMResponse,
  type Sleep,
  type ToolCall,
} from '../../lib/index';

// Random agents on a table with both extensions: replies ask for tools (some needing approval),
// end the turn, or overflow the context (compacted, then the retry may overflow again); each
// pause is answered by approving, denying, editing, cancelling or letting the timeout pass.
// Whatever happens: no move is ever rejected, and every tool call the LLM asked for is answered
// (sendToolResults or settleToolCalls) before the next user message.
const TABLE = extendTable(extendTable(DEFAULT_TABLE, APPROVAL_EXTENSION), COMPACTION_EXTENSION);

type Reply = { tools: Array<'safe' | 'risky'> } | { text: string } | { overflow: true };
const replyArb: fc.Arbitrary<Reply> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc
      .array(fc.constantFrom<'safe' | 'risky'>('safe', 'risky'), { minLength: 1, maxLength: 3 })
      .map((tools) => ({ tools })),
  },
  { weight: 2, arbitrary: fc.constant({ text: 'done' }) },
  { weight: 1, arbitrary: fc.constant({ overflow: true as const }) },
);
type Answer = 'approve' | 'deny' | 'edit' | 'cancel' | 'timeout';
const answerArb = fc.constantFrom<Answer>('approve', 'deny', 'edit', 'cancel', 'timeout');

describe('extension states (property-based)', () => {
  it('random agents with approvals and overflows never see a rejected move or an unanswered tool call', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(replyArb, { minLength: 1, maxLength: 8 }),
        fc.array(answerArb, { minLength: 1, maxLength: 6 }),
        fc.integer({ min: 1, max: 3 }),
        async (replies, answers, turns) => {
          let next = 0;
          let seq = 0;
          const open = new Set<string>();
          const problems: string[] = [];
          const respond = async (): Promise<LLMResponse> => {
            // Past the script the model answers with text, so every turn ends.
            const r = replies[next++] ?? { text: 'done' };
            if ('overflow' in r)
              throw Object.assign(new Error('prompt is too long: 300000 tokens > 200000 maximum'), { status: 400 });
            if ('text' in r) return { text: r.text };
            const toolCalls: ToolCall[] = r.tools.map((name) => ({ id: `t${++seq}`, name, input: { n: seq } }));
            for (const c of toolCalls) open.add(c.id);
            return { toolCalls };
          };
          const answer = (ids: string[]): void => {
            for (const id of ids) {
              if (!open.delete(id)) problems.push(`answered ${id}, which is not open`);
            }
          };
          const agent: AgentLoop = {
            sendUserMessage: async () => {
              if (open.size > 0) problems.push(`a user message with ${[...open].join(', ')} unanswered`);
              return respond();
            },
            async sendToolResults(results) {
              const response = await respond();
              answer(results.map((r) => r.callId));
              return response;
            },
            runTool: async (call) => ({ callId: call.id, output: 'ok' }),
            settleToolCalls: async (results) => answer(results.map((r) => r.callId)),
            compact: async () => ({ removedMessages: 1 }),
          };
          let fireTimeout: (() => void) | undefined;
          const sleep: Sleep = (ms, signal) =>
            new Promise<void>((resolve) => {
              if (ms === 60_000) fireTimeout = resolve;
              else resolve();
              signal?.addEventListener('abort', () => resolve(), { once: true });
            });
          const adapter = new AgentWithStateMachine(agent, {
            table: TABLE,
            approve: { risky: true },
            approvalTimeoutMs: 60_000,
            compact: true,
            logger: false,
            sleep,
            retry: { retries: 0 },
          });
          let rejected = 0;
          adapter.machine.on('rejected', () => void (rejected += 1));
          let a = 0;
          for (let t = 0; t < turns; t++) {
            let result = await adapter.runTurn(`turn ${t}`);
            while (result.outcome === 'awaiting_approval') {
              const how = answers[a++ % answers.length]!;
              const pending = result.pendingApprovals!;
              if (how === 'cancel') adapter.cancel('no');
              else if (how === 'timeout') fireTimeout?.();
              else
                for (const p of pending) {
                  if (how === 'approve') adapter.approve(p.callId);
                  else if (how === 'edit') adapter.approve(p.callId, { input: { edited: true } });
                  else adapter.deny(p.callId, 'no');
                }
              result = await adapter.continueTurn();
            }
            expect(adapter.machine.isInTerminalState()).toBe(true);
          }
          expect(rejected).toBe(0);
          expect(problems).toEqual([]);
          expect([...open]).toEqual([]);
        },
      ),
      { numRuns: 150 },
    );
  });
});
