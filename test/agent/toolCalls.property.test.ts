import fc from 'fast-check';
import {
  AgentWithStateMachine,
  type AgentLoop,
  type LLMResponse,
  type ToolCall,
  type ToolResult,
} from '../../lib/index';

// A random agent: each LLM reply asks for 0–4 tool calls or fails; each tool finishes, fails,
// throws, cancels the turn, or stalls until its signal aborts. The property follows what a
// real conversation would hold.
type ToolKind = 'ok' | 'isError' | 'throw' | 'cancel' | 'stall';
const toolKind = fc.constantFrom<ToolKind>('ok', 'isError', 'throw', 'cancel', 'stall');
const replyArb = fc.oneof(
  { weight: 4, arbitrary: fc.array(toolKind, { minLength: 1, maxLength: 4 }).map((tools) => ({ tools })) },
  { weight: 1, arbitrary: fc.constant({ text: 'done' }) },
  { weight: 1, arbitrary: fc.constant({ fail: true as const }) },
);

describe('AgentWithStateMachine tool calls (property-based)', () => {
  it('answers every requested tool call exactly once, in order, and never runs more than maxToolCalls, at any concurrency', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(replyArb, { minLength: 1, maxLength: 8 }),
        fc.option(fc.nat(6), { nil: undefined }),
        fc.constantFrom(1, 2, 3, Infinity),
        fc.boolean(),
        fc.integer({ min: 1, max: 3 }),
        async (replies, maxToolCalls, toolConcurrency, withSettle, turns) => {
          let next = 0;
          let seq = 0;
          const asked: string[] = [];
          const answered: string[] = [];
          // Tools running per turn: a cancel with no grace (cancelGraceMs: 0) leaves a tool of the
          // turn behind, still running when the next turn's tools start; the bound is a turn's.
          let turn = 0;
          const running: number[] = [];
          let maxRunning = 0;
          let started = 0;
          let adapter!: AgentWithStateMachine;
          const respond = async (): Promise<LLMResponse> => {
            const r = replies[next++ % replies.length]!;
            if ('fail' in r) throw Object.assign(new Error('bad request'), { status: 400 });
            if ('text' in r) return { text: r.text };
            const toolCalls: ToolCall[] = r.tools.map((kind) => ({ id: `t${++seq}`, name: kind }));
            asked.push(...toolCalls.map((c) => c.id));
            return { toolCalls };
          };
          const agent: AgentLoop = {
            sendUserMessage: () => respond(),
            async sendToolResults(results) {
              const response = await respond();
              // Only a call that succeeded carries its results into the conversation.
              answered.push(...results.map((r) => r.callId));
              return response;
            },
            async runTool(call, ctx): Promise<ToolResult> {
              started += 1;
              const mine = turn;
              running[mine] = (running[mine] ?? 0) + 1;
              maxRunning = Math.max(maxRunning, running[mine]);
              try {
                await new Promise((r) => setImmediate(r));
                switch (call.name as ToolKind) {
                  case 'ok':
                    return { callId: call.id, output: 'ok' };
                  case 'isError':
                    return { callId: call.id, output: 'no', isError: true };
                  case 'throw':
                    throw new Error('tool crashed');
                  case 'cancel':
                    adapter.cancel('random cancel');
                    return { callId: call.id, output: 'finished before the cancel took effect' };
                  case 'stall':
                    await new Promise<void>((resolve) =>
                      ctx.signal.aborted ? resolve() : ctx.signal.addEventListener('abort', () => resolve()),
                    );
                    throw new Error('aborted');
                }
              } finally {
                running[mine]! -= 1;
              }
            },
          };
          if (withSettle)
            agent.settleToolCalls = async (results) => void answered.push(...results.map((r) => r.callId));
          adapter = new AgentWithStateMachine(agent, {
            logger: false,
            toolConcurrency,
            cancelGraceMs: 0,
            retry: { retries: 0 },
            sleep: async () => undefined,
            ...(maxToolCalls === undefined ? {} : { budget: { maxToolCalls } }),
          });
          const rejected: unknown[] = [];
          adapter.machine.on('rejected', (e) => rejected.push(e));
          for (let t = 0; t < turns; t++) {
            turn = t;
            // A turn whose stall tool is alone has nobody to cancel it: cancel it from outside.
            const timer = setTimeout(() => adapter.cancel('watchdog'), 2);
            const result = await adapter.runTurn(`turn ${t}`);
            clearTimeout(timer);
            answered.push(...(result.unansweredToolCalls ?? []).map((u) => u.result.callId));
            if (withSettle) expect(result.unansweredToolCalls).toBeUndefined();
          }
          expect(answered).toEqual(asked);
          expect(rejected).toEqual([]);
          if (maxToolCalls !== undefined) expect(started).toBeLessThanOrEqual(maxToolCalls);
          expect(maxRunning).toBeLessThanOrEqual(toolConcurrency);
          expect(adapter.usage.toolCalls).toBe(started);
        },
      ),
      { numRuns: 200 },
    );
  }, 30_000);
});
