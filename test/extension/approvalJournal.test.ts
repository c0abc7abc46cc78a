// The adapter's approval answers in its journal (the same `approval` line as the framework
// mirrors'): written, with the answer, when the answer is taken and before the tool runs (its
// commit awaited); a run resumed from that journal takes the answers instead of asking again,
// and an approved call that may have been running at the cut follows the resume's tool policy.
import { AgentWithStateMachine } from '../../lib/agent/AgentWithStateMachine';
import { createScriptedAgent, type ScriptedAgent } from '../../lib/agent/createScriptedAgent';
import { APPROVAL_EXTENSION } from '../../lib/agent/extensionStates';
import type { RecordedLine } from '../../lib/agent/journal/RunRecording';
import { extendTable } from '../../lib/machine/extendTable';
import { DEFAULT_TABLE } from '../../lib/machine/transitions';

const TABLE = extendTable(DEFAULT_TABLE, APPROVAL_EXTENSION);
const CALLS = [
  { id: 'c1', name: 'ls', input: { dir: '.' } },
  { id: 'c2', name: 'rm', input: { path: '/tmp/x' } },
];

/** `ls` needs no approval, `rm` does; each tool run is logged in `log`. */
function script(log: string[], calls = CALLS): ScriptedAgent {
  return createScriptedAgent({
    replies: [{ toolCalls: calls }, { text: 'done' }],
    tools: {
      ls: () => {
        log.push('run ls');
        return 'a b';
      },
      rm: (call) => {
        log.push(`run rm ${JSON.stringify(call.input)}`);
        return `removed ${(call.input as { path: string }).path}`;
      },
    },
  });
}

/** An adapter journaling into `lines`; `log` gets each journal line's kind as it is written, and each commit as it is kept. */
function adapter(loop: ScriptedAgent, log: string[], extra: Record<string, unknown> = {}) {
  const lines: Array<Record<string, unknown>> = [];
  const a = new AgentWithStateMachine(loop, {
    table: TABLE,
    approve: { rm: true },
    journal: true,
    logger: false,
    sink: {
      write: () => undefined,
      journal: (entry) => {
        const line = entry as unknown as Record<string, unknown>;
        lines.push(line);
        if (line.type !== 'approval') return undefined;
        log.push(`approval ${String(line.callId)}`);
        // A store's commit: the tool must wait for it.
        return new Promise<void>((resolve) => setTimeout(() => (log.push('kept'), resolve()), 20));
      },
    },
    ...extra,
  });
  return { a, lines };
}

const approvals = (lines: Array<Record<string, unknown>>) => lines.filter((l) => l.type === 'approval');

/** The journal of a run cut after `rm` was approved, `ls` had run, and `rm` had started (no result). */
function cutJournal(answer: Record<string, unknown>): RecordedLine[] {
  return [
    {
      type: 'llm',
      turn: 1,
      operation: 'sendUserMessage',
      attempt: 1,
      input: { kind: 'user_message', message: 'clean up' },
      response: { toolCalls: CALLS },
    },
    { type: 'approval', turn: 1, callId: 'c2', name: 'rm', at: 1, ...answer } as RecordedLine,
    { type: 'tool', turn: 1, call: CALLS[0]!, status: 'ok', result: { callId: 'c1', output: 'a b' } },
  ];
}

describe('approval answers in the adapter’s journal', () => {
  it('an approval is journaled with its answer (and the input given) when taken, and kept before the tool runs', async () => {
    const log: string[] = [];
    const { a, lines } = adapter(script(log), log);
    expect((await a.runTurn('clean up')).outcome).toBe('awaiting_approval');
    expect(approvals(lines)).toEqual([]);
    a.approve('c2', { input: { path: '/tmp/y' } });
    expect((await a.continueTurn()).outcome).toBe('end_of_turn');
    expect(log).toEqual(['approval c2', 'kept', 'run ls', 'run rm {"path":"/tmp/y"}']);
    expect(approvals(lines)).toEqual([
      {
        type: 'approval',
        turn: 1,
        callId: 'c2',
        name: 'rm',
        approved: true,
        input: { path: '/tmp/y' },
        at: expect.any(Number),
      },
    ]);
  });

  it('a denial is journaled with its reason, and the tool does not run', async () => {
    const log: string[] = [];
    const { a, lines } = adapter(script(log), log);
    await a.runTurn('clean up');
    a.deny('c2', 'not today');
    expect((await a.continueTurn()).outcome).toBe('end_of_turn');
    expect(log).toEqual(['approval c2', 'kept', 'run ls']);
    expect(approvals(lines)).toEqual([
      {
        type: 'approval',
        turn: 1,
        callId: 'c2',
        name: 'rm',
        approved: false,
        reason: 'not today',
        at: expect.any(Number),
      },
    ]);
  });

  it('resumed: a journaled approval is not asked again; under replay the tool cut off while running is not run again', async () => {
    const log: string[] = [];
    const loop = script(log);
    const { a, lines } = adapter(loop, log, { resumeFrom: { journal: cutJournal({ approved: true }) } });
    const requested: unknown[] = [];
    a.on('approvalRequested', (info) => void requested.push(info));
    const result = await a.runTurn('clean up');
    expect(result.outcome).toBe('end_of_turn');
    expect(requested).toEqual([]);
    expect(log).toEqual(['approval c2', 'kept']);
    expect(a.resumed).toMatchObject({ servedTools: 1, interruptedTools: 1, rerunTools: 0 });
    const sent = loop.calls.find((c) => c.op === 'sendToolResults') as { results: Array<{ output: string }> };
    expect(sent.results[1]!.output).toMatch(/^interrupted: /);
    expect(approvals(lines)).toMatchObject([{ callId: 'c2', approved: true, fromJournal: true }]);

    // A live response (a loop that cannot take recorded ones restarts) is asked again, even for a call id the journal answered.
    const restarted = script(log);
    delete (restarted as { acceptRecorded?: unknown }).acceptRecorded;
    const live = adapter(restarted, log, { resumeFrom: { journal: cutJournal({ approved: true }) } });
    expect((await live.a.runTurn('clean up')).outcome).toBe('awaiting_approval');
    expect(approvals(live.lines)).toEqual([]);
  });

  it('resumed under resumeTools rerun: the approved tool runs again, once, with the input the person gave, without asking', async () => {
    const log: string[] = [];
    const { a } = adapter(script(log), log, {
      resumeFrom: { journal: cutJournal({ approved: true, input: { path: '/tmp/y' } }) },
      resumeTools: { rerun: ['rm'] },
    });
    expect((await a.runTurn('clean up')).outcome).toBe('end_of_turn');
    expect(log).toEqual(['approval c2', 'kept', 'run rm {"path":"/tmp/y"}']);
    expect(a.resumed).toMatchObject({ rerunTools: 1, interruptedTools: 0 });
  });

  it('resumed: a journaled denial is not asked again, and the model gets it', async () => {
    const log: string[] = [];
    const loop = script(log);
    const { a } = adapter(loop, log, { resumeFrom: { journal: cutJournal({ approved: false, reason: 'not today' }) } });
    expect((await a.runTurn('clean up')).outcome).toBe('end_of_turn');
    expect(log).toEqual(['approval c2', 'kept']);
    const sent = loop.calls.find((c) => c.op === 'sendToolResults') as { results: Array<{ output: string }> };
    expect(sent.results[1]!.output).toBe('denied: not today');
  });

  it('resumed while one of two calls was answered: only the other is asked, and no tool counts as cut off', async () => {
    const log: string[] = [];
    const calls = [CALLS[1]!, { id: 'c3', name: 'rm', input: { path: '/tmp/z' } }];
    const journal = cutJournal({ approved: true }).slice(0, 2);
    (journal[0]!.response as { toolCalls: unknown }).toolCalls = calls;
    const { a } = adapter(script(log, calls), log, { resumeFrom: { journal } });
    const paused = await a.runTurn('clean up');
    expect(paused.outcome).toBe('awaiting_approval');
    expect(paused.pendingApprovals).toEqual([{ callId: 'c3', name: 'rm', input: { path: '/tmp/z' } }]);
    a.deny('c3', 'not z');
    expect((await a.continueTurn()).outcome).toBe('end_of_turn');
    expect(log).toEqual(['approval c2', 'approval c3', 'kept', 'kept', 'run rm {"path":"/tmp/x"}']);
    expect(a.resumed).toMatchObject({ interruptedTools: 0 });
  });
});
