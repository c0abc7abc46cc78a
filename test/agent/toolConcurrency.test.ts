import { createScriptedAgent, AgentWithStateMachine, type ToolCall, type ToolResult } from '../../lib/index';

const calls = (n: number): ToolCall[] => Array.from({ length: n }, (_, i) => ({ id: `c${i + 1}`, name: 'work' }));

function gated(n: number, options: { toolConcurrency: number; maxToolCalls?: number }) {
  const gates: Array<{ id: string; release: (output: string) => void; signal: AbortSignal }> = [];
  const agent = createScriptedAgent({
    sleep: async () => undefined,
    replies: [{ toolCalls: calls(n) }, { text: 'done' }],
    tools: {
      work: (call, ctx) =>
        new Promise<ToolResult>((resolve, reject) => {
          gates.push({ id: call.id, release: (output) => resolve({ callId: call.id, output }), signal: ctx.signal });
          ctx.signal.addEventListener('abort', () => reject(new Error('aborted')));
        }),
    },
  });
  const adapter = new AgentWithStateMachine(agent, {
    logger: false,
    sleep: async () => undefined,
    cancelGraceMs: 0,
    toolConcurrency: options.toolConcurrency,
    maxHistorySize: Infinity,
    ...(options.maxToolCalls === undefined ? {} : { budget: { maxToolCalls: options.maxToolCalls } }),
  });
  return { agent, adapter, gates };
}

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('AgentWithStateMachine toolConcurrency', () => {
  it('.runTurn() runs up to toolConcurrency calls at once and sends results in call order', async () => {
    const { agent, adapter, gates } = gated(3, { toolConcurrency: 2 });
    const turn = adapter.runTurn('go');
    await tick();
    expect(gates.map((g) => g.id)).toEqual(['c1', 'c2']);
    gates[1]!.release('second');
    await tick();
    expect(gates.map((g) => g.id)).toEqual(['c1', 'c2', 'c3']);
    gates[2]!.release('third');
    gates[0]!.release('first');
    expect((await turn).outcome).toBe('end_of_turn');
    const sent = agent.calls.find((c) => c.op === 'sendToolResults');
    expect(sent).toMatchObject({
      results: [
        { callId: 'c1', output: 'first' },
        { callId: 'c2', output: 'second' },
        { callId: 'c3', output: 'third' },
      ],
    });
    const record = adapter.machine.history().find((r) => r.to === 'CheckingGitCommits')!;
    expect((record.data as { results: unknown[] }).results).toHaveLength(3);
  });

  it('.runTurn() with Infinity starts every call at once; maxToolCalls caps how many start', async () => {
    const all = gated(4, { toolConcurrency: Infinity });
    const turn = all.adapter.runTurn('go');
    await tick();
    expect(all.gates).toHaveLength(4);
    for (const g of all.gates) g.release('ok');
    await turn;

    const capped = gated(4, { toolConcurrency: Infinity, maxToolCalls: 2 });
    const cappedTurn = capped.adapter.runTurn('go');
    await tick();
    expect(capped.gates).toHaveLength(2);
    for (const g of capped.gates) g.release('ok');
    const result = await cappedTurn;
    expect(result.outcome).toBe('budget_exceeded');
    expect(result.unansweredToolCalls!.map((u) => u.result.output)).toEqual([
      'ok',
      'ok',
      'not run: budget exceeded: 2 tool calls of 2 tool calls after 1 LLM call',
      'not run: budget exceeded: 2 tool calls of 2 tool calls after 1 LLM call',
    ]);
  });

  it('.cancel() aborts every running call; the finished one keeps its real result', async () => {
    const { adapter, gates } = gated(3, { toolConcurrency: 3 });
    const turn = adapter.runTurn('go');
    await tick();
    gates[0]!.release('finished');
    await tick();
    adapter.cancel('stop');
    const result = await turn;
    expect(gates.map((g) => g.signal.aborted)).toEqual([true, true, true]);
    expect(result.outcome).toBe('cancelled');
    expect(result.unansweredToolCalls!.map((u) => u.result.output)).toEqual([
      'finished',
      'interrupted: stop',
      'interrupted: stop',
    ]);
  });
});
