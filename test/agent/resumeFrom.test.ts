// The adapter's resumeFrom, case by case: what is served, what goes live and why, the tool
// policy's checks, and how the earlier spend is counted.
import { AgentWithStateMachine } from '../../lib/agent/AgentWithStateMachine';
import { createScriptedAgent, type ScriptedReply } from '../../lib/agent/createScriptedAgent';
import type { RecordedLine } from '../../lib/agent/journal/RunRecording';
import { resumeAgent } from '../../lib/replay/resumeAgent';

const COST = { inputTokens: 10, outputTokens: 5, costUsd: 0.1 };
const REPLIES: ScriptedReply[] = [
  { toolCalls: [{ id: 'c1', name: 'write', input: {} }], usage: COST },
  { text: 'done', usage: COST },
];

/** The journal of a run cut after its first response and its tool's result. */
const JOURNAL: RecordedLine[] = [
  {
    type: 'llm',
    turn: 1,
    operation: 'sendUserMessage',
    attempt: 1,
    input: { kind: 'user_message', message: 'go' },
    response: { toolCalls: [{ id: 'c1', name: 'write', input: {} }], usage: COST },
    costUsd: 0.1,
  },
  {
    type: 'tool',
    turn: 1,
    call: { id: 'c1', name: 'write', input: {} },
    status: 'ok',
    result: { callId: 'c1', output: 'written' },
  },
];

const agentOf = (loop: ReturnType<typeof createScriptedAgent>, resumeFrom: unknown, resumeTools?: unknown) =>
  new AgentWithStateMachine(loop, {
    logger: false,
    resumeFrom: resumeFrom as never,
    ...(resumeTools === undefined ? {} : { resumeTools: resumeTools as never }),
  });

describe('resumeFrom', () => {
  it('serves the recorded response and tool result, then goes live with the results the run had', async () => {
    const loop = createScriptedAgent({ replies: REPLIES, tools: { write: { output: 'written again' } } });
    const agent = agentOf(loop, { journal: JOURNAL, usage: { costUsd: 0.15, llmCalls: 2, toolCalls: 1 } });
    const result = await agent.runTurn('go');
    expect(result).toMatchObject({ outcome: 'end_of_turn', text: 'done' });
    expect(loop.calls.map((c) => c.op)).toEqual(['acceptRecorded', 'sendToolResults']);
    expect(loop.calls[1]).toMatchObject({ results: [{ callId: 'c1', output: 'written' }] });
    expect(agent.resumed).toEqual({
      mode: 'recovered',
      recordedCalls: 1,
      servedTools: 1,
      rerunTools: 0,
      interruptedTools: 0,
    });
    // The earlier spend counts once: $0.10 served, $0.05 more the file says was spent (a failed
    // attempt, a call in flight), one more LLM call; then the live call's $0.10.
    expect(agent.usage).toMatchObject({ costUsd: 0.25, llmCalls: 3, toolCalls: 1 });
  });

  it('goes live where the run asks for another call than the recorded one, and says why', async () => {
    const loop = createScriptedAgent({ replies: REPLIES, tools: { write: { output: 'x' } } });
    const agent = agentOf(loop, { journal: JOURNAL });
    await agent.runTurn('something else');
    expect(loop.calls.map((c) => c.op)).toEqual(['sendUserMessage', 'runTool', 'sendToolResults']);
    expect(agent.resumed?.recordedCalls).toBe(0);
    expect(agent.resumed?.diverged).toBe(
      'at LLM call 1: the user message differs: recorded "go", asked "something else"',
    );
  });

  it('restarts a loop without acceptRecorded, its earlier spend counted from the start', async () => {
    const loop = createScriptedAgent({ replies: REPLIES, tools: { write: { output: 'x' } } });
    delete (loop as { acceptRecorded?: unknown }).acceptRecorded;
    const agent = new AgentWithStateMachine(loop, {
      logger: false,
      budget: { maxCostUsd: 0.25, strict: false },
      resumeFrom: { journal: JOURNAL, usage: { costUsd: 0.15, llmCalls: 1 } },
    });
    const result = await agent.runTurn('go');
    expect(agent.resumed).toMatchObject({
      mode: 'restarted',
      reason: 'the agent loop has no acceptRecorded operation',
    });
    // $0.15 before and $0.10 for the first call reach the $0.25 cap: the second call is not made.
    expect(result.outcome).toBe('budget_exceeded');
    expect(loop.calls.filter((c) => c.op.startsWith('send'))).toHaveLength(1);
    expect(result.usage).toMatchObject({ costUsd: 0.25, llmCalls: 2 });
  });

  it('ends the turn in Error when acceptRecorded throws', async () => {
    const loop = createScriptedAgent({ replies: REPLIES, tools: { write: { output: 'x' } } });
    loop.acceptRecorded = () => Promise.reject(new Error('cannot rebuild'));
    const result = await agentOf(loop, { journal: JOURNAL }).runTurn('go');
    expect(result.outcome).toBe('error');
    expect(result.error?.message).toContain('acceptRecorded');
    expect(result.error?.message).toContain('cannot rebuild');
  });

  it('rejects a bad resumeFrom or tool policy, naming it', () => {
    const loop = createScriptedAgent({ replies: REPLIES });
    expect(() => agentOf(loop, [])).toThrow(/Expected `resumeFrom` to be an object \{ journal, usage\? \}/);
    expect(() => agentOf(loop, { journal: JOURNAL }, { default: 'skip' })).toThrow(
      "Expected `resumeTools.default` to be 'serve' or 'rerun', got `skip` (string)",
    );
    expect(() => agentOf(loop, { journal: JOURNAL }, { rerun: ['a'], serve: ['a'] })).toThrow(
      'Expected `resumeTools.rerun` to be names not also in resumeTools.serve, got `a` (string)',
    );
    // Checked without a journal too: a batch's policy is named before the first resume needs it.
    expect(() => agentOf(loop, undefined, { serve: 'write' })).toThrow(
      'Expected `resumeTools.serve` to be an array of tool names, got `write` (string)',
    );
    expect(() => agentOf(loop, { journal: JOURNAL, usage: 3 })).toThrow(/Expected `resumeFrom.usage`/);
  });

  it('asks a function policy per call and checks what it returns', async () => {
    const loop = createScriptedAgent({ replies: REPLIES, tools: { write: { output: 'again' } } });
    const asked: string[] = [];
    const agent = agentOf(
      loop,
      {
        journal: JOURNAL,
      },
      (call: { name: string }) => (asked.push(call.name), 'rerun'),
    );
    await agent.runTurn('go');
    expect(asked).toEqual(['write']);
    expect(loop.calls.map((c) => c.op)).toEqual(['acceptRecorded', 'runTool', 'sendToolResults']);
    expect(agent.resumed?.rerunTools).toBe(1);
    const bad = agentOf(createScriptedAgent({ replies: REPLIES }), { journal: JOURNAL }, () => 'maybe');
    const result = await bad.runTurn('go');
    expect(result.outcome).toBe('error');
    expect(result.error?.message).toBe(
      "resumeTools failed: Expected `resumeTools(write)` to be 'serve' or 'rerun', got `maybe` (string)",
    );
  });

  it("refuses the tool policy's earlier words, each with the one to use", async () => {
    const loop = createScriptedAgent({ replies: REPLIES });
    expect(() => agentOf(loop, { journal: JOURNAL, tools: { rerun: ['write'] } })).toThrow(
      'Expected `resumeFrom.tools` to be left out: the tool policy is the option `resumeTools` (beside `resumeFrom`), as on runBatch()',
    );
    expect(() => agentOf(loop, { journal: JOURNAL }, { default: 'replay' })).toThrow(
      "Expected `resumeTools.default` to be 'serve' or 'rerun' ('replay' is now 'serve'), got `replay` (string)",
    );
    expect(() => agentOf(loop, { journal: JOURNAL }, { replay: ['write'] })).toThrow(
      'Expected `resumeTools.replay` to be left out: `replay` is now `serve`',
    );
    const old = await agentOf(createScriptedAgent({ replies: REPLIES }), { journal: JOURNAL }, () => 'replay').runTurn(
      'go',
    );
    expect(old.error?.message).toContain("to be 'serve' or 'rerun' ('replay' is now 'serve'), got `replay`");
    await expect(
      resumeAgent({ journal: JOURNAL } as never, createScriptedAgent({ replies: REPLIES }), {
        tools: { rerun: ['write'] },
      } as never),
    ).rejects.toThrow(
      'Expected `options.tools` to be left out: the tool policy is the option `resumeTools`, as on runBatch() and the adapter',
    );
  });

  it('replays each round its own result when a loop repeats a call id across rounds', async () => {
    const ask = (n: number): RecordedLine => ({
      type: 'llm',
      turn: 1,
      operation: n === 1 ? 'sendUserMessage' : 'sendToolResults',
      attempt: 1,
      input:
        n === 1
          ? { kind: 'user_message', message: 'go' }
          : { kind: 'tool_results', results: [{ callId: 'c1', output: 'round 1' }], messages: [] },
      response: { toolCalls: [{ id: 'c1', name: 'write' }], usage: COST },
    });
    const tool = (output: string): RecordedLine => ({
      type: 'tool',
      turn: 1,
      call: { id: 'c1', name: 'write' },
      status: 'ok',
      result: { callId: 'c1', output },
    });
    const loop = createScriptedAgent({
      replies: [
        { toolCalls: [{ id: 'c1', name: 'write' }] },
        { toolCalls: [{ id: 'c1', name: 'write' }] },
        { text: 'done' },
      ],
      tools: { write: { output: 'live' } },
    });
    const agent = agentOf(loop, { journal: [ask(1), tool('round 1'), ask(2), tool('round 2')] });
    await agent.runTurn('go');
    expect(loop.calls.map((c) => c.op)).toEqual(['acceptRecorded', 'acceptRecorded', 'sendToolResults']);
    expect(loop.calls[2]).toMatchObject({ results: [{ callId: 'c1', output: 'round 2' }] });
    expect(agent.resumed).toMatchObject({ recordedCalls: 2, servedTools: 2 });
  });
});
