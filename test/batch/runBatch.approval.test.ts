import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createScriptedAgent, type ScriptedAgent } from '../../lib/agent/createScriptedAgent';
import { APPROVAL_EXTENSION } from '../../lib/agent/extensionStates';
import { formatBatchReport } from '../../lib/batch/formatBatchReport';
import type { BatchApprovalRequest } from '../../lib/batch/approvals/ParkedRuns';
import { runBatch, type BatchOptions, type BatchProgress } from '../../lib/batch/runBatch';
import { loadHistory } from '../../lib/history/loadHistory';
import { validateHistory } from '../../lib/history/validateHistory';
import { heldSleep } from '../helpers/heldSleep';
import { extendTable } from '../../lib/machine/extendTable';
import { InvalidArgumentError } from '../../lib/machine/InvalidArgumentError';
import { DEFAULT_TABLE } from '../../lib/machine/transitions';

const TABLE = extendTable(DEFAULT_TABLE, APPROVAL_EXTENSION);

let dir: string;
beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-park-'))));
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** What happened, across every run of a batch, in order: progress events and tool calls. */
type Log = string[];

/** A task whose run asks to `rm` (which waits for approval) after an `ls` that does not, then ends. */
function needsApproval(id: string, log: Log): ScriptedAgent {
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
    tools: {
      ls: () => (log.push(`${id} ran ls`), 'a b'),
      rm: (call) => (log.push(`${id} ran rm`), `removed ${(call.input as { path: string }).path}`),
    },
  });
}

/** Task `a`, whose run waits for approval, then task `b`, whose run does not. */
function approvalThenPlain(log: Log) {
  return [
    { id: 'a', input: 'clean up', agent: needsApproval('a', log) },
    { id: 'b', input: 'work', agent: plain('b', log) },
  ];
}

/** A task whose run calls a tool needing no approval, then ends. */
function plain(id: string, log: Log): ScriptedAgent {
  return createScriptedAgent({
    replies: [{ toolCalls: [{ id: 'w', name: 'work' }] }, { text: 'ok' }],
    tools: { work: () => (log.push(`${id} ran work`), 'done') },
  });
}

/**
 * Logs the batch's events, and a line `running N` whenever the runs in a slot pass the
 * concurrency (onProgress's throws are only logged by the batch, so an expect here would not fail).
 */
function tracker(log: Log, concurrency: number, also?: (p: BatchProgress) => void): BatchOptions['onProgress'] {
  return (p) => {
    if (p.running > concurrency || p.running < 0) log.push(`running ${p.running}`);
    const e = p.event;
    if (e.type === 'started' || e.type === 'parked' || e.type === 'unparked') log.push(`${e.type} ${e.id}`);
    else if (e.type === 'finished') log.push(`finished ${e.run.id}`);
    else log.push(`skipped ${e.count}`);
    also?.(p);
  };
}

/** Every history file validates against the table, with no rejected move. */
async function expectCleanHistories(report: Awaited<ReturnType<typeof runBatch>>): Promise<string[][]> {
  const paths: string[][] = [];
  for (const run of report.runs) {
    if (run.historyFile === undefined) continue;
    const { entries } = await loadHistory(run.historyFile);
    expect(validateHistory(entries, TABLE)).toMatchObject({ ok: true, issues: [] });
    // The file checks on its own too (what `agent-sm validate` does): its meta line names the run's table.
    expect(validateHistory(entries)).toMatchObject({ ok: true, issues: [] });
    expect(entries.filter((e) => e.kind === 'rejected')).toEqual([]);
    paths.push(entries.flatMap((e) => (e.kind === 'record' ? [e.record.to] : [])));
  }
  return paths;
}

const base = (): BatchOptions => ({ table: TABLE, approve: { rm: true }, logger: false, historyDir: dir });

describe('runBatch parks a run that waits for approval', () => {
  it('concurrency 1: the parked run lets go of its slot, the other tasks run to their end, then it finishes', async () => {
    const log: Log = [];
    let request: BatchApprovalRequest | undefined;
    const report = await runBatch([...approvalThenPlain(log), { id: 'c', input: 'work', agent: plain('c', log) }], {
      ...base(),
      concurrency: 1,
      onApproval: (r) => {
        request = r;
        log.push(`asked ${r.id} for ${r.calls.map((c) => c.name).join(',')}`);
      },
      // The answer comes once b and c have ended: proof that they ran while a waited.
      onProgress: tracker(log, 1, (p) => {
        if (p.event.type === 'finished' && p.event.run.id === 'c') request!.approve('c2');
      }),
    });
    expect(log).toEqual([
      'started a',
      'parked a',
      'asked a for rm',
      'started b',
      'b ran work',
      'finished b',
      'started c',
      'c ran work',
      'finished c',
      'unparked a',
      'a ran ls',
      'a ran rm',
      'finished a',
    ]);
    expect(request!.calls).toEqual([{ callId: 'c2', name: 'rm', input: { path: '/tmp/x' } }]);
    expect(report.runs.map((r) => r.outcome)).toEqual(['end_of_turn', 'end_of_turn', 'end_of_turn']);
    expect(report.runs[0]!.approval).toMatchObject({ waits: 1, calls: 1 });
    expect(report.runs[1]!.approval).toBeUndefined();
    const [a] = await expectCleanHistories(report);
    expect(a).toContain('AwaitingApproval');
    expect(a!.at(-1)).toBe('EndOfTurn');
  });

  it('a parked run whose answers are in takes the next free slot before a new task starts', async () => {
    const log: Log = [];
    let request: BatchApprovalRequest | undefined;
    const report = await runBatch([...approvalThenPlain(log), { id: 'c', input: 'work', agent: plain('c', log) }], {
      ...base(),
      concurrency: 1,
      onApproval: (r) => void (request = r),
      // Answered while b holds the only slot: a gets it when b ends, before c starts.
      onProgress: tracker(log, 1, (p) => {
        if (p.event.type === 'started' && p.event.id === 'b') request!.approve('c2', { input: { path: '/tmp/safe' } });
      }),
    });
    expect(log).toEqual([
      'started a',
      'parked a',
      'started b',
      'b ran work',
      'finished b',
      'unparked a',
      'a ran ls',
      'a ran rm',
      'finished a',
      'started c',
      'c ran work',
      'finished c',
    ]);
    expect(report.runs.map((r) => r.outcome)).toEqual(['end_of_turn', 'end_of_turn', 'end_of_turn']);
    await expectCleanHistories(report);
  });

  it('deny: the denied call never runs, the LLM gets the reason, and the run ends normally', async () => {
    const log: Log = [];
    const agent = needsApproval('a', log);
    const report = await runBatch([{ id: 'a', input: 'clean up', agent }], {
      ...base(),
      concurrency: 1,
      onApproval: ({ calls, deny }) => {
        for (const call of calls) deny(call.callId, 'not on a Friday');
      },
      onProgress: tracker(log, 1),
    });
    expect(log).toEqual(['started a', 'parked a', 'unparked a', 'a ran ls', 'finished a']);
    expect(report.runs[0]!.outcome).toBe('end_of_turn');
    expect(agent.calls.find((c) => c.op === 'sendToolResults')).toMatchObject({
      results: [
        { callId: 'c1', output: 'a b' },
        { callId: 'c2', output: 'denied: not on a Friday', isError: true },
      ],
    });
    const [a] = await expectCleanHistories(report);
    expect(a).toEqual(expect.arrayContaining(['AwaitingApproval', 'RunningTool', 'EndOfTurn']));
  });

  it('abort while parked: the parked run ends as cancelled, tasks not started are skipped', async () => {
    const log: Log = [];
    const controller = new AbortController();
    let asked = 0;
    const report = await runBatch([...approvalThenPlain(log), { id: 'c', input: 'work', agent: plain('c', log) }], {
      ...base(),
      concurrency: 1,
      signal: controller.signal,
      onApproval: () => void (asked += 1),
      onProgress: tracker(log, 1, (p) => {
        if (p.event.type === 'finished' && p.event.run.id === 'b') controller.abort();
      }),
    });
    expect(asked).toBe(1);
    expect(report.runs.map((r) => r.outcome)).toEqual(['cancelled', 'end_of_turn', 'skipped']);
    expect(report.runs[0]!.error?.message).toMatch(/AwaitingApproval: aborted/);
    expect(report.runs[0]!.approval).toMatchObject({ waits: 1, calls: 1 });
    // Neither tool ran: the run was cut off before its answers.
    expect(log.filter((l) => l.startsWith('a ran'))).toEqual([]);
    const [a] = await expectCleanHistories(report);
    expect(a!.at(-1)).toBe('Cancelled');
  });

  it('no answer within approvalTimeoutMs: the parked run ends in ApprovalTimedOut on its own, and says how long it waited', async () => {
    const log: Log = [];
    let now = 1_000_000;
    // The approval timeout's wait ends when the test says; every other wait at once.
    const { sleep, release } = heldSleep(60_000);
    const report = await runBatch(approvalThenPlain(log), {
      ...base(),
      concurrency: 1,
      approvalTimeoutMs: 60_000,
      sleep,
      clock: () => now,
      onProgress: tracker(log, 1, (p) => {
        if (p.event.type === 'finished' && p.event.run.id === 'b') {
          now += 60_000;
          release();
        }
      }),
    });
    expect(log).toEqual(['started a', 'parked a', 'started b', 'b ran work', 'finished b', 'finished a']);
    expect(report.runs.map((r) => r.outcome)).toEqual(['cancelled', 'end_of_turn']);
    expect(report.runs[0]!.error?.message).toContain('no answer to the approval request within 60000 ms');
    expect(report.runs[0]!.approval).toEqual({ waits: 1, calls: 1, waitedMs: 60_000 });
    const [a] = await expectCleanHistories(report);
    expect(a!.at(-1)).toBe('ApprovalTimedOut');
    const text = formatBatchReport(report);
    expect(text).toContain('Parked for approval: 1 run, 1 minute waited in all');
    expect(text).toContain('a  waited 1 minute for 1 approval, then cancelled');
  });

  it('with concurrency 2, many runs park and resume; every one ends, the slots never pass 2', async () => {
    const log: Log = [];
    const pending: BatchApprovalRequest[] = [];
    const tasks = Array.from({ length: 6 }, (_, i) =>
      i % 2 === 0
        ? { id: `p${i}`, input: 'clean up', agent: needsApproval(`p${i}`, log) }
        : { id: `q${i}`, input: 'work', agent: plain(`q${i}`, log) },
    );
    const report = await runBatch(tasks, {
      ...base(),
      concurrency: 2,
      onApproval: (r) => void pending.push(r),
      // Answer every waiting run each time a run ends or parks: the batch needs them all answered to end.
      onProgress: tracker(log, 2, (p) => {
        if (p.event.type === 'finished' || p.event.type === 'parked')
          queueMicrotask(() => {
            for (const r of pending.splice(0)) r.approve('c2');
          });
      }),
    });
    expect(log.filter((l) => l.startsWith('running'))).toEqual([]);
    expect(report.runs.every((r) => r.outcome === 'end_of_turn')).toBe(true);
    expect(report.runs.filter((r) => r.approval !== undefined).map((r) => r.id)).toEqual(['p0', 'p2', 'p4']);
    for (const id of ['p0', 'p2', 'p4'])
      expect(log.filter((l) => l.endsWith(` ${id}`) || l.startsWith(`${id} `))).toEqual([
        `started ${id}`,
        `parked ${id}`,
        `unparked ${id}`,
        `${id} ran ls`,
        `${id} ran rm`,
        `finished ${id}`,
      ]);
    await expectCleanHistories(report);
  });

  it('answered but still waiting for a slot when its timeout passes: it ends in ApprovalTimedOut without taking one', async () => {
    const log: Log = [];
    const { sleep, release } = heldSleep(1000);
    let request: BatchApprovalRequest | undefined;
    const report = await runBatch(approvalThenPlain(log), {
      ...base(),
      concurrency: 1,
      approvalTimeoutMs: 1000,
      sleep,
      onApproval: (r) => void (request = r),
      onProgress: tracker(log, 1, (p) => {
        if (p.event.type === 'started' && p.event.id === 'b') {
          request!.approve('c2');
          release();
        }
      }),
    });
    expect(report.runs.map((r) => r.outcome)).toEqual(['cancelled', 'end_of_turn']);
    expect(log.filter((l) => l.startsWith('running') || l.includes('unparked') || l.startsWith('a ran'))).toEqual([]);
    const [a] = await expectCleanHistories(report);
    expect(a!.at(-1)).toBe('ApprovalTimedOut');
  });

  it('its timeout passing as it takes a slot: the run ends in that slot, and the slot goes on to the next task', async () => {
    const log: Log = [];
    const { sleep, release } = heldSleep(1000);
    const report = await runBatch(approvalThenPlain(log), {
      ...base(),
      concurrency: 1,
      approvalTimeoutMs: 1000,
      sleep,
      onApproval: ({ approve }) => approve('c2'),
      onProgress: tracker(log, 1, (p) => {
        if (p.event.type === 'unparked') release();
      }),
    });
    // The timer's end reached the turn before the answers did.
    expect(report.runs.map((r) => r.outcome)).toEqual(['cancelled', 'end_of_turn']);
    expect(log).toEqual(['started a', 'parked a', 'unparked a', 'finished a', 'started b', 'b ran work', 'finished b']);
    await expectCleanHistories(report);
  });

  it('a run that asks again after its first answers parks again; its row counts both waits', async () => {
    const log: Log = [];
    let now = 0;
    const agent = createScriptedAgent({
      replies: [
        { toolCalls: [{ id: 'r1', name: 'rm', input: { path: '/a' } }] },
        { toolCalls: [{ id: 'r2', name: 'rm', input: { path: '/b' } }] },
        { text: 'done' },
      ],
      tools: { rm: (call) => (log.push(`a ran rm ${(call.input as { path: string }).path}`), 'removed') },
    });
    const report = await runBatch(
      [
        { id: 'a', input: 'clean up', agent },
        { id: 'b', input: 'work', agent: plain('b', log) },
      ],
      {
        ...base(),
        concurrency: 1,
        clock: () => now,
        // Each request is answered 250 ms (of the injected clock) after it came.
        onApproval: ({ calls, approve }) => {
          now += 250;
          for (const call of calls) approve(call.callId);
        },
        onProgress: tracker(log, 1),
      },
    );
    expect(log).toEqual([
      'started a',
      'parked a',
      'unparked a',
      'a ran rm /a',
      'parked a',
      'unparked a',
      'a ran rm /b',
      'finished a',
      'started b',
      'b ran work',
      'finished b',
    ]);
    expect(report.runs[0]).toMatchObject({ outcome: 'end_of_turn', approval: { waits: 2, calls: 2, waitedMs: 500 } });
    await expectCleanHistories(report);
  });

  it('answers are checked: an unknown call, a second answer, an answer after the run went on', async () => {
    let request: BatchApprovalRequest | undefined;
    const errors: unknown[] = [];
    await runBatch([{ id: 'a', input: 'clean up', agent: needsApproval('a', []) }], {
      ...base(),
      onApproval: (r) => {
        request = r;
        for (const bad of [() => r.approve('nope'), () => r.deny('c2', 42 as unknown as string)])
          try {
            bad();
          } catch (error) {
            errors.push(error);
          }
        r.approve('c2');
        try {
          r.deny('c2', 'changed my mind');
        } catch (error) {
          errors.push(error);
        }
      },
    });
    expect(errors).toHaveLength(3);
    for (const e of errors) expect(e).toBeInstanceOf(InvalidArgumentError);
    expect(String((errors[0] as Error).message)).toMatch(/c2/);
    expect(() => request!.approve('c2')).toThrow(InvalidArgumentError);
  });

  it('onApproval that throws is logged; the run stays parked until its timeout', async () => {
    const messages: string[] = [];
    const { sleep, release } = heldSleep(5000);
    const report = await runBatch(approvalThenPlain([]), {
      ...base(),
      concurrency: 1,
      approvalTimeoutMs: 5000,
      sleep,
      logger: { error: (m: string) => void messages.push(m), warn: () => {}, info: () => {}, debug: () => {} },
      onApproval: () => {
        throw new Error('queue down');
      },
      onProgress: (p) => {
        if (p.event.type === 'finished') release();
      },
    });
    expect(report.runs.map((r) => r.outcome)).toEqual(['cancelled', 'end_of_turn']);
    expect(messages.some((m) => /onApproval threw for run a: queue down/.test(m))).toBe(true);
  });

  it('onApproval needs an approval policy, and must be a function', async () => {
    await expect(runBatch([], { onApproval: () => {} })).rejects.toThrow(/approve/);
    await expect(
      runBatch([], { approve: { rm: true }, table: TABLE, onApproval: 'yes' as unknown as () => void }),
    ).rejects.toThrow(InvalidArgumentError);
  });
});
