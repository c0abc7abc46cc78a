import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createScriptedAgent, type ScriptedReply } from '../../lib/agent/createScriptedAgent';
import { runBatch, type BatchTask } from '../../lib/batch/runBatch';
import { validateHistory } from '../../lib/history/validateHistory';
import { loadHistory } from '../../lib/history/loadHistory';

const instant = async (): Promise<void> => undefined;
const COST = { inputTokens: 100, outputTokens: 10, costUsd: 0.1 };
// Two LLM calls a run: $0.20.
const REPLIES: ScriptedReply[] = [
  { toolCalls: [{ id: 'c1', name: 'bash' }], usage: COST },
  { text: 'done', usage: COST },
];

let dir: string;
beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-resume-'))));
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Six tasks whose agents count how often they are built. */
function tasks(built: string[]): BatchTask[] {
  return Array.from({ length: 6 }, (_, i) => ({
    id: `t${i}`,
    input: 'go',
    agent: () => (
      built.push(`t${i}`),
      createScriptedAgent({ sleep: instant, replies: REPLIES, tools: { bash: { output: 'ok' } } })
    ),
  }));
}

/**
 * The folder as a kill would leave it: t1 cut after its first five moves, t4 and t5 never
 * started. Written without journal or ledger (both on by default), so that t1 restarts: a
 * journaled run continuing is runBatch.killedContinue's.
 */
async function interruptedFolder(): Promise<void> {
  await runBatch(tasks([]), { historyDir: dir, concurrency: 2, logger: false, journal: false, ledger: false });
  const lines = fs.readFileSync(path.join(dir, 't1.jsonl'), 'utf8').split('\n');
  fs.writeFileSync(path.join(dir, 't1.jsonl'), `${lines.slice(0, 6).join('\n')}\n`);
  fs.rmSync(path.join(dir, 't4.jsonl'));
  fs.rmSync(path.join(dir, 't5.jsonl'));
}

describe('runBatch({ resume: true })', () => {
  it('runs only what did not end, reports every task once, and keeps finished files untouched', async () => {
    await interruptedFolder();
    const finished = ['t0', 't2', 't3'].map((id) => fs.readFileSync(path.join(dir, `${id}.jsonl`), 'utf8'));
    const built: string[] = [];
    const report = await runBatch(tasks(built), { historyDir: dir, concurrency: 2, logger: false, resume: true });
    expect(built.sort()).toEqual(['t1', 't4', 't5']);
    expect(report.runs.map((r) => [r.id, r.outcome, r.resumed ?? 'new'])).toEqual([
      ['t0', 'end_of_turn', 'finished'],
      ['t1', 'end_of_turn', 'restarted'],
      ['t2', 'end_of_turn', 'finished'],
      ['t3', 'end_of_turn', 'finished'],
      ['t4', 'end_of_turn', 'new'],
      ['t5', 'end_of_turn', 'new'],
    ]);
    expect(['t0', 't2', 't3'].map((id) => fs.readFileSync(path.join(dir, `${id}.jsonl`), 'utf8'))).toEqual(finished);
    // The cut-off attempt is kept beside; its spend counts in the restarted run's usage.
    expect(fs.existsSync(path.join(dir, 't1.jsonl.interrupted'))).toBe(true);
    const cut = await loadHistory(path.join(dir, 't1.jsonl.interrupted'));
    expect(validateHistory(cut.entries).interrupted).toBeDefined();
    const restarted = report.runs[1]!;
    expect(restarted.usage.llmCalls).toBe(2 + (cut.records.some((r) => r.to === 'ProcessingLLMResponse') ? 1 : 0));
    // Every task's file now says how its run ended.
    for (const run of report.runs)
      expect(validateHistory((await loadHistory(run.historyFile!)).entries).interrupted).toBeUndefined();
    expect(report.totals.outcomes.end_of_turn).toBe(6);
  });

  it('starts the shared budget from the spend in the files, so the cap holds across both processes', async () => {
    await interruptedFolder();
    const built: string[] = [];
    // $0.70 was spent before: $0.60 by the three runs that ended, $0.10 by t1's cut attempt.
    // Under a $0.90 cap, t1's second attempt ($0.20) is all that fits; t4 and t5 are skipped.
    const report = await runBatch(tasks(built), {
      historyDir: dir,
      concurrency: 1,
      logger: false,
      resume: true,
      total: { maxCostUsd: 0.9, strict: false },
    });
    expect(built).toEqual(['t1']);
    expect(report.runs.map((r) => [r.id, r.outcome])).toEqual([
      ['t0', 'end_of_turn'],
      ['t1', 'end_of_turn'],
      ['t2', 'end_of_turn'],
      ['t3', 'end_of_turn'],
      ['t4', 'skipped'],
      ['t5', 'skipped'],
    ]);
    expect(report.totals.costUsd).toBe(0.9);
    expect(report.stopped?.message).toBe("the batch's total budget exceeded: $0.9000 of $0.9000 after 9 LLM calls");
  });

  it('counts what a cut-off attempt spent even when the resumed batch has no room to run it again', async () => {
    await interruptedFolder();
    const built: string[] = [];
    // $0.70 spent before: a $0.70 cap leaves nothing, so nothing runs, and the totals still say $0.70.
    // (Not strict: a strict cap needs pricing, and these loops report their cost.)
    const report = await runBatch(tasks(built), {
      historyDir: dir,
      logger: false,
      resume: true,
      total: { maxCostUsd: 0.7, strict: false },
    });
    expect(built).toEqual([]);
    expect(report.runs.map((r) => r.outcome)).toEqual([
      'end_of_turn',
      'skipped',
      'end_of_turn',
      'end_of_turn',
      'skipped',
      'skipped',
    ]);
    expect(report.runs[1]!.usage.costUsd).toBe(0.1);
    expect(report.totals.costUsd).toBe(0.7);
    // Not run again, so its cut-off file stays where it was, for the next resume.
    expect(fs.existsSync(path.join(dir, 't1.jsonl'))).toBe(true);
  });

  it('refuses to resume a folder of another batch, or none, saying why', async () => {
    await expect(runBatch(tasks([]), { resume: true })).rejects.toThrow(
      'Expected `resume` to be false unless `historyDir` names the folder of the batch to resume',
    );
    await expect(runBatch(tasks([]), { historyDir: dir, resume: true, logger: false })).rejects.toThrow(/has none/);
    await runBatch(tasks([]).slice(0, 2), { historyDir: dir, logger: false });
    await expect(runBatch(tasks([]), { historyDir: dir, resume: true, logger: false })).rejects.toThrow(
      'it lists 2 tasks, this batch has 6',
    );
  });

  it('refuses resumeTools on a batch that does not resume, by name, before any run', async () => {
    const built: string[] = [];
    await expect(
      runBatch(tasks(built), { historyDir: dir, journal: true, resumeTools: { rerun: ['search'] }, logger: false }),
    ).rejects.toThrow(
      'Expected `resumeTools` to be left out unless `resume` is true: it says which recorded tool calls a resumed run serves',
    );
    expect(built).toEqual([]);
    expect(fs.readdirSync(dir)).toEqual([]);
  });
});
