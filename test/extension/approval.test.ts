import { AgentWithStateMachine } from '../../lib/agent/AgentWithStateMachine';
import { runBatch } from '../../lib/batch/runBatch';
import { createScriptedAgent, type ScriptedAgent } from '../../lib/agent/createScriptedAgent';
import { APPROVAL_EXTENSION } from '../../lib/agent/extensionStates';
import type { TransitionRecord } from '../../lib/machine/TransitionRecord';
import { extendTable } from '../../lib/machine/extendTable';
import { InvalidTableError } from '../../lib/machine/InvalidTableError';
import { InvalidArgumentError } from '../../lib/machine/InvalidArgumentError';
import { DEFAULT_TABLE } from '../../lib/machine/transitions';
import { heldSleep } from '../helpers/heldSleep';

const TABLE = extendTable(DEFAULT_TABLE, APPROVAL_EXTENSION);

/** Two tool calls, one of them (`rm`) needing approval, then a closing text. */
function script(): ScriptedAgent {
  return createScriptedAgent({
    replies: [
      {
        toolCalls: [
          { id: 'c1', name: 'ls', input: { dir: '.' } },
          { id: 'c2', name: 'rm', input: { path: '/tmp/x' } },
        ],
      },
      { text: 'done' },
    ],
    tools: { ls: { output: 'a b' }, rm: async (call) => `removed ${(call.input as { path: string }).path}` },
  });
}

function adapter(agent: ScriptedAgent, extra: Record<string, unknown> = {}) {
  const records: TransitionRecord<string>[] = [];
  const a = new AgentWithStateMachine(agent, {
    table: TABLE,
    approve: { rm: true },
    logger: false,
    sink: { write: (r) => void records.push(r) },
    ...extra,
  });
  return { a, records };
}

const path = (records: TransitionRecord<string>[]): string[] => records.map((r) => r.to);

describe('approval (AwaitingApproval)', () => {
  it('a call the policy names stops the turn in AwaitingApproval with the call in the move’s data; approve runs it and the turn ends', async () => {
    const agent = script();
    const { a, records } = adapter(agent);
    const requested: unknown[] = [];
    a.on('approvalRequested', (info) => void requested.push(info));
    const paused = await a.runTurn('clean up');
    expect(paused.outcome).toBe('awaiting_approval');
    expect(requested).toEqual([{ turn: 1, requests: paused.pendingApprovals }]);
    expect(paused.pendingApprovals).toEqual([{ callId: 'c2', name: 'rm', input: { path: '/tmp/x' } }]);
    expect(a.machine.current).toBe('AwaitingApproval');
    expect(a.awaitingApproval).toBe(true);
    expect(records.at(-1)!.data).toEqual({ calls: [{ callId: 'c2', name: 'rm', input: { path: '/tmp/x' } }] });
    // No tool ran yet, not even the one that needs no approval.
    expect(agent.calls.filter((c) => c.op === 'runTool')).toEqual([]);
    a.approve('c2');
    const done = await a.continueTurn();
    expect(done.outcome).toBe('end_of_turn');
    expect(done.text).toBe('done');
    expect(path(records)).toEqual([
      'WaitingForUserInput',
      'SendingToLLM',
      'ProcessingLLMResponse',
      'ToolUseRequested',
      'CheckingForCancellation',
      'AwaitingApproval',
      'RunningTool',
      'CheckingGitCommits',
      'CheckingBudget',
      'GatheringAdditionalMessages',
      'SendingToolResults',
      'ProcessingLLMResponse',
      'EndOfTurn',
    ]);
    const sent = agent.calls.find((c) => c.op === 'sendToolResults');
    expect(sent).toMatchObject({
      results: [
        { callId: 'c1', output: 'a b' },
        { callId: 'c2', output: 'removed /tmp/x' },
      ],
    });
    expect(records.find((r) => r.from === 'AwaitingApproval')!.data).toMatchObject({
      decisions: [{ callId: 'c2', approved: true }],
    });
  });

  it('a denied call does not run, and the LLM gets the reason as its result', async () => {
    const agent = script();
    const { a } = adapter(agent);
    await a.runTurn('clean up');
    a.deny('c2', 'not on a Friday');
    const done = await a.continueTurn();
    expect(done.outcome).toBe('end_of_turn');
    expect(agent.calls.filter((c) => c.op === 'runTool').map((c) => (c.op === 'runTool' ? c.call.id : ''))).toEqual([
      'c1',
    ]);
    expect(agent.calls.find((c) => c.op === 'sendToolResults')).toMatchObject({
      results: [
        { callId: 'c1', output: 'a b' },
        { callId: 'c2', output: 'denied: not on a Friday', isError: true },
      ],
    });
  });

  it('an approval with edited input runs the tool with that input', async () => {
    const agent = script();
    const { a } = adapter(agent);
    await a.runTurn('clean up');
    a.approve('c2', { input: { path: '/tmp/safe' } });
    await a.continueTurn();
    expect(agent.calls.find((c) => c.op === 'sendToolResults')).toMatchObject({
      results: [{ callId: 'c1' }, { callId: 'c2', output: 'removed /tmp/safe' }],
    });
  });

  it('a policy function decides per call; calls it lets through never stop the turn', async () => {
    const agent = script();
    const { a } = adapter(agent, {
      approve: (call: { input?: unknown }) => JSON.stringify(call.input).includes('/etc'),
    });
    const result = await a.runTurn('clean up');
    expect(result.outcome).toBe('end_of_turn');
  });

  it('no answer within approvalTimeoutMs ends the turn in ApprovalTimedOut, and the waiting calls are answered for the conversation', async () => {
    // The timeout's wait ends when the test says, never by the clock.
    const { sleep, release } = heldSleep(1000);
    const agent = script();
    const settled: unknown[] = [];
    agent.settleToolCalls = async (results) => void settled.push(...results);
    const { a, records } = adapter(agent, { approvalTimeoutMs: 1000, sleep });
    const paused = await a.runTurn('clean up');
    expect(paused.outcome).toBe('awaiting_approval');
    const next = a.continueTurn();
    release();
    const ended = await next;
    expect(ended.outcome).toBe('cancelled');
    expect(ended.error?.message).toContain('no answer to the approval request within 1000 ms');
    expect(a.machine.current).toBe('ApprovalTimedOut');
    expect(records.at(-1)!.data).toMatchObject({ outcome: 'cancelled', unanswered: ['c2'] });
    expect(settled).toEqual([
      { callId: 'c1', output: expect.stringContaining('not run') as unknown, isError: true },
      { callId: 'c2', output: expect.stringContaining('not run') as unknown, isError: true },
    ]);
    // The next turn runs normally.
    expect(() => a.approve('c2')).toThrow(InvalidArgumentError);
  });

  it('cancel while waiting moves AwaitingApproval → Cancelled (a legal move)', async () => {
    const agent = script();
    const { a, records } = adapter(agent);
    await a.runTurn('clean up');
    expect(a.cancel('changed my mind')).toBe(true);
    const ended = await a.continueTurn();
    expect(ended.outcome).toBe('cancelled');
    const last = records.at(-1)!;
    expect([last.from, last.to, last.forced]).toEqual(['AwaitingApproval', 'Cancelled', false]);
  });

  it('answers are checked: an unknown call id, a second answer, a turn waiting on nothing', async () => {
    const agent = script();
    const { a } = adapter(agent);
    expect(() => a.approve('c2')).toThrow(/none is waiting/);
    expect(() => a.continueTurn()).toThrow(InvalidArgumentError);
    await a.runTurn('clean up');
    expect(() => a.approve('nope')).toThrow(/c2/);
    expect(() => a.deny('c2', 42 as never)).toThrow(InvalidArgumentError);
    await expect(a.runTurn('again')).rejects.toThrow();
    a.approve('c2');
    expect(() => a.approve('c2')).toThrow(InvalidArgumentError);
    expect((await a.continueTurn()).outcome).toBe('end_of_turn');
  });

  it('refuses a policy given as an array of names, saying what to write: it would read as tools named 0 and 1', () => {
    expect(() => adapter(script(), { approve: ['rm'] })).toThrow(
      'Expected `approve` to be an object { toolName: true } or a function (call) => boolean, not an array: write { "rm": true }',
    );
  });

  it('the adapter checks at construction that a given table has the edges its options ask for, naming each missing one', () => {
    const agent = script();
    // No table: the option brings APPROVAL_EXTENSION.
    expect(
      new AgentWithStateMachine(agent, { approve: { rm: true }, logger: false }).machine.table.states,
    ).toHaveProperty('AwaitingApproval');
    const plain = () =>
      new AgentWithStateMachine(agent, { table: DEFAULT_TABLE, approve: { rm: true }, logger: false });
    expect(plain).toThrow(InvalidTableError);
    expect(plain).toThrow(
      /^`approve` needs the states and edges of APPROVAL_EXTENSION, which `table` lacks \(CheckingForCancellation → AwaitingApproval/,
    );
    const noTimeout = extendTable(DEFAULT_TABLE, {
      states: [{ name: 'AwaitingApproval', description: '', next: ['RunningTool', 'Cancelled'], activity: 'wait' }],
      edges: [['CheckingForCancellation', 'AwaitingApproval']],
    });
    expect(
      () => new AgentWithStateMachine(agent, { table: noTimeout, approve: { rm: true }, logger: false }),
    ).not.toThrow();
    expect(
      () =>
        new AgentWithStateMachine(agent, {
          table: noTimeout,
          approve: { rm: true },
          approvalTimeoutMs: 5,
          logger: false,
        }),
    ).toThrow(/AwaitingApproval → ApprovalTimedOut/);
    // Default unchanged: no table, no policy, the sixteen states.
    expect(new AgentWithStateMachine(agent, { logger: false }).machine.table).toBe(DEFAULT_TABLE);
  });

  it('in a batch, a run that waits is answered through onRun’s agent and the task finishes', async () => {
    const report = await runBatch(
      [
        { id: 'a', input: 'clean up', agent: script() },
        { id: 'b', input: 'clean up', agent: script() },
      ],
      {
        concurrency: 2,
        table: TABLE,
        approve: { rm: true },
        logger: false,
        onRun: ({ agent }) =>
          void agent.on('approvalRequested', ({ requests }) => {
            for (const r of requests) agent.deny(r.callId, 'batch policy');
          }),
      },
    );
    expect(report.runs.map((r) => r.outcome)).toEqual(['end_of_turn', 'end_of_turn']);
  });
});
