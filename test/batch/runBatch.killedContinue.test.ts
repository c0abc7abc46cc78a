// A journaled batch killed with SIGKILL while three runs wait inside their tool, then resumed:
// the cut-off runs continue from their journal. No LLM call whose response is in a file is
// requested again (calls counted by content, as the loops receive them), tools follow the
// policy, finished files are untouched, every task is reported once.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createScriptedAgent, type ScriptedAgent } from '../../lib/agent/createScriptedAgent';
import { runBatch, type BatchTask } from '../../lib/batch/runBatch';
import { loadHistory } from '../../lib/history/loadHistory';
import { validateHistory } from '../../lib/history/validateHistory';
import { formatBatchReport } from '../../lib/batch/formatBatchReport';
import { buildHtmlReport } from '../../lib/report/buildHtmlReport';
import { batchTasks } from '../fixtures/batch/batchTasks';
import { killBatchAfter } from '../helpers/killBatch';

jest.setTimeout(60_000);

let dir: string;
beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-continue-'))));
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** The batch's tasks again, each loop kept so that what it was asked can be read. */
function resumedTasks(loops: Map<string, ScriptedAgent>, withAccept = true): BatchTask[] {
  return batchTasks().map((task, i) => ({
    ...task,
    agent: () => {
      const loop = createScriptedAgent({
        replies: [
          { toolCalls: [{ id: 'c1', name: 'work' }], usage: { inputTokens: 100, outputTokens: 10, costUsd: 0.1 } },
          { text: `done ${i}`, usage: { inputTokens: 100, outputTokens: 10, costUsd: 0.1 } },
        ],
        tools: { work: { output: 'ok' } },
      });
      if (!withAccept) delete (loop as { acceptRecorded?: unknown }).acceptRecorded;
      loops.set(task.id, loop);
      return loop;
    },
  }));
}

/** An LLM call by its content: the operation and what it carried. */
function llmKey(op: string, input: unknown): string {
  return `${op} ${JSON.stringify(input)}`;
}

/** What each cut-off run's file had answered, by content, read before a resume moves the file aside. */
async function answeredCalls(finished: readonly string[]): Promise<Map<string, Set<string>>> {
  const answered = new Map<string, Set<string>>();
  for (const task of batchTasks()) {
    const file = path.join(dir, `${task.id}.jsonl`);
    if (finished.includes(task.id) || !fs.existsSync(file)) continue;
    const { journal } = await loadHistory(file);
    answered.set(
      task.id,
      new Set(
        journal
          .filter((j) => j.type === 'llm' && j.response !== undefined)
          .map((j) => llmKey(String(j.operation), j.input)),
      ),
    );
  }
  return answered;
}

describe('a journaled batch killed with SIGKILL, then resumed', () => {
  it.each([
    [4, 'turn', false, 'serve'],
    [7, 'move', false, 'rerun'],
    [5, 'none', false, 'rerun'],
    [3, 'turn', true, 'serve'],
  ] as const)(
    'after %i runs ended (durability %s, group commit %s, tool policy %s): cut-off runs continue, no answered call is asked again',
    async (k, durability, groupCommit, policy) => {
      const finished = await killBatchAfter(dir, k, { durability, groupCommit, journal: true });
      const files = new Map(finished.map((id) => [id, fs.readFileSync(path.join(dir, `${id}.jsonl`))]));
      // What each cut-off file had answered, by content, before the resume moves it aside.
      const answered = await answeredCalls(finished);

      const loops = new Map<string, ScriptedAgent>();
      const report = await runBatch(resumedTasks(loops), {
        historyDir: dir,
        concurrency: 3,
        logger: false,
        resume: true,
        journal: true,
        resumeTools: { default: 'serve', ...(policy === 'rerun' ? { rerun: ['work'] } : {}) },
      });
      expect(report.runs.map((r) => r.id)).toEqual(batchTasks().map((t) => t.id));
      expect(report.runs.every((r) => r.outcome === 'end_of_turn')).toBe(true);
      for (const id of finished) expect(loops.has(id)).toBe(false);
      for (const [id, bytes] of files) expect(fs.readFileSync(path.join(dir, `${id}.jsonl`)).equals(bytes)).toBe(true);

      let continued = 0;
      for (const run of report.runs) {
        const loop = loops.get(run.id);
        if (loop === undefined) {
          expect(run.resumed).toBe('finished');
          continue;
        }
        const asked = loop.calls.flatMap((c) =>
          c.op === 'sendUserMessage'
            ? [llmKey(c.op, { kind: 'user_message', message: c.message })]
            : c.op === 'sendToolResults'
              ? [llmKey(c.op, { kind: 'tool_results', results: c.results, messages: c.messages })]
              : [],
        );
        const before = answered.get(run.id);
        if (before === undefined) {
          // Never started: a new run, both calls live.
          expect(run.resumed).toBeUndefined();
          expect(asked).toHaveLength(2);
          continue;
        }
        for (const key of asked) expect(before.has(key)).toBe(false);
        expect(asked).toHaveLength(2 - before.size);
        expect(run.resume?.recordedCalls ?? 0).toBe(before.size);
        if (before.size > 0) {
          continued += 1;
          expect(run.resumed).toBe('recovered');
          // The tool was cut off while it ran: run again only under `rerun`, else answered as interrupted.
          const ranTool = loop.calls.some((c) => c.op === 'runTool');
          expect(ranTool).toBe(policy === 'rerun');
          if (policy === 'serve') {
            expect(run.resume?.interruptedTools).toBe(1);
            const sent = loop.calls.find((c) => c.op === 'sendToolResults');
            expect(sent?.op === 'sendToolResults' && sent.results[0]!.output).toMatch(
              /^interrupted: the run was cut off/,
            );
          }
        } else expect(run.resumed).toBe('restarted');
        // The whole run is in its new file; the cut-off attempt beside it.
        expect(fs.existsSync(`${run.historyFile!}.interrupted`)).toBe(true);
      }
      // The three runs in flight waited in their tool: without group commit each had journaled its first response.
      expect(continued).toBe(groupCommit ? 0 : 3);
      // Each answered call is counted once, by the run that made it or the one that continued it:
      // twelve runs of two $0.10 calls. (Group commit loses the cut-off runs' first call from the files.)
      if (!groupCommit) expect(report.totals).toMatchObject({ costUsd: 2.4, llmCalls: 24 });
      for (const run of report.runs)
        expect(validateHistory((await loadHistory(run.historyFile!)).entries)).toMatchObject({ ok: true, issues: [] });
      // The text report and the folder's report cover every task once and say which continued.
      expect(formatBatchReport(report)).toContain(
        `Resumed: ${finished.length} finished earlier (not run again), ${continued} recovered from their journal`,
      );
      const folder = await buildHtmlReport(dir);
      expect(folder.runs).toBe(12);
      expect(folder.html.split('recovered from its journal at LLM call 2 (1 response served)').length - 1).toBe(
        continued,
      );
    },
  );

  it('with only historyDir (durable by default): run again it is told to resume; resumed, no answered call is asked again', async () => {
    const finished = await killBatchAfter(dir, 4, { durability: 'turn', groupCommit: false });
    const answered = await answeredCalls(finished);
    // The three runs in flight had each journaled their first response, with no option asking for it.
    expect([...answered.values()].map((a) => a.size)).toEqual([1, 1, 1]);

    const loops = new Map<string, ScriptedAgent>();
    await expect(runBatch(resumedTasks(loops), { historyDir: dir, concurrency: 3, logger: false })).rejects.toThrow(
      /to continue that batch \(after a crash or a kill\), run it again with `resume: true` and the same tasks/,
    );
    expect(loops.size).toBe(0);

    const report = await runBatch(resumedTasks(loops), {
      historyDir: dir,
      concurrency: 3,
      logger: false,
      resume: true,
    });
    expect(report.runs.every((r) => r.outcome === 'end_of_turn')).toBe(true);
    for (const [id, before] of answered) {
      const asked = loops
        .get(id)!
        .calls.flatMap((c) =>
          c.op === 'sendUserMessage'
            ? [llmKey(c.op, { kind: 'user_message', message: c.message })]
            : c.op === 'sendToolResults'
              ? [llmKey(c.op, { kind: 'tool_results', results: c.results, messages: c.messages })]
              : [],
        );
      for (const key of asked) expect(before.has(key)).toBe(false);
      expect(asked).toHaveLength(1);
      expect(report.runs.find((r) => r.id === id)!.resumed).toBe('recovered');
    }
    // Twelve runs of two $0.10 calls, each answered call paid once.
    expect(report.totals).toMatchObject({ costUsd: 2.4, llmCalls: 24 });
  });

  it('restarts a cut-off run whose loop cannot take recorded responses, its earlier spend counted', async () => {
    const finished = await killBatchAfter(dir, 6, { durability: 'move', groupCommit: false, journal: true });
    const loops = new Map<string, ScriptedAgent>();
    const report = await runBatch(resumedTasks(loops, false), {
      historyDir: dir,
      concurrency: 3,
      logger: false,
      resume: true,
      journal: true,
    });
    const restarted = report.runs.filter((r) => r.resumed === 'restarted');
    expect(restarted).toHaveLength(3);
    for (const run of restarted) {
      expect(run.resume?.reason).toBe('the agent loop has no acceptRecorded operation');
      // Both calls asked again; the first attempt's call counts too.
      expect(loops.get(run.id)!.calls.filter((c) => c.op.startsWith('send'))).toHaveLength(2);
      expect(run.usage.llmCalls).toBe(3);
      expect(run.usage.costUsd).toBeCloseTo(0.3, 10);
    }
    expect(report.runs.filter((r) => r.resumed === 'finished').map((r) => r.id)).toEqual(
      expect.arrayContaining(finished),
    );
    expect(report.totals.costUsd).toBeCloseTo(12 * 0.2 + 3 * 0.1, 10);
    // The folder alone tells them apart too: their cut-off attempts are kept beside their files.
    const folder = await buildHtmlReport(dir);
    expect(folder.runs).toBe(12);
    // Each restarted run's note: the crash's mark, then how it went on.
    expect(
      folder.html.match(/resumed after a crash: 1 cut-off attempt set aside[^;"]*; restarted from the beginning/g),
    ).toHaveLength(3);
  });
});
