// A batch of framework tasks killed with SIGKILL while runs wait in their tool, then resumed,
// once or after further kills. These runs drive the mirror by hand and ask for no recorded
// response, so a run cut off starts again, but what its earlier attempts spent is carried into its new file:
// the report counts every billed request, a later resume still sees them, and per-run caps hold
// across the kills.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runBatch } from '../../lib/batch/runBatch';
import { loadHistory } from '../../lib/history/loadHistory';
import { runFacts } from '../../lib/history/runFacts';
import { validateHistory } from '../../lib/history/validateHistory';
import { CALL_USD, FRAMEWORK_TASKS, frameworkTasks } from '../fixtures/batch/frameworkTasks';
import { killFixtureAfter } from '../helpers/killBatch';

jest.setTimeout(60_000);

const FIXTURE = path.join(__dirname, '..', 'fixtures', 'batch', 'frameworkBatchToKill.ts');
const BATCH = { tasks: FRAMEWORK_TASKS, concurrency: 3 };

let dir: string;
let billing: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-fwkill-'));
  billing = path.join(dir, '..', `${path.basename(dir)}.billing`);
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
  fs.rmSync(billing, { force: true });
});

/** Requests billed, per task id. */
function billed(): Map<string, number> {
  const counts = new Map<string, number>();
  const text = fs.existsSync(billing) ? fs.readFileSync(billing, 'utf8') : '';
  for (const line of text.split('\n').filter(Boolean)) {
    const id = line.split(' ')[0]!;
    counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return counts;
}

const resumeHere = (perRun?: { maxLlmCalls: number }) =>
  runBatch(
    frameworkTasks(billing, () => Promise.resolve()),
    { historyDir: dir, resume: true, journal: true, logger: false, concurrency: 3, ...(perRun ? { perRun } : {}) },
  );

describe('a batch of framework tasks killed with SIGKILL, then resumed', () => {
  it.each([1, 2, 3])(
    'after %i runs ended: every task reported once, every billed request counted in the report and the files',
    async (k) => {
      const finished = await killFixtureAfter([FIXTURE, dir, billing, '-'], k, BATCH);
      expect(finished).toHaveLength(k);
      const report = await resumeHere();
      expect(report.runs.map((r) => r.id)).toEqual(Array.from({ length: FRAMEWORK_TASKS }, (_, i) => `fw-${i}`));
      expect(report.runs.every((r) => r.outcome === 'end_of_turn')).toBe(true);
      const bills = billed();
      const totalBilled = [...bills.values()].reduce((a, b) => a + b, 0);
      // What the report says was spent is what the server billed, to the cent.
      expect(report.totals.llmCalls).toBe(totalBilled);
      expect(report.totals.costUsd).toBeCloseTo(totalBilled * CALL_USD, 10);
      for (const run of report.runs) {
        expect(run.usage.llmCalls).toBe(bills.get(run.id));
        if (finished.includes(run.id)) expect(run.resumed).toBe('finished');
        // Each resumed file holds the whole run's spend: a later resume reads it from there.
        const history = await loadHistory(run.historyFile!);
        expect(validateHistory(history.entries).issues).toEqual([]);
        expect(runFacts(history.entries).finalUsage?.llmCalls).toBe(bills.get(run.id));
      }
      // The runs cut off in their tool started again: their first call was made twice.
      const restarted = report.runs.filter((r) => r.resumed === 'restarted');
      expect(restarted).toHaveLength(Math.min(3, FRAMEWORK_TASKS - k));
      for (const run of restarted) expect(bills.get(run.id)).toBe(3);
    },
  );

  it('killed three times in a row, then resumed: the report still counts every billed request', async () => {
    await killFixtureAfter([FIXTURE, dir, billing, '-'], 1, BATCH);
    // Each resume runs the cut-off runs again until they wait in their tool, and is killed there.
    await killFixtureAfter([FIXTURE, dir, billing, '-', 'resume'], 0, BATCH);
    await killFixtureAfter([FIXTURE, dir, billing, '-', 'resume'], 0, BATCH);
    const report = await resumeHere();
    const bills = billed();
    const totalBilled = [...bills.values()].reduce((a, b) => a + b, 0);
    expect(report.totals.llmCalls).toBe(totalBilled);
    expect(report.totals.costUsd).toBeCloseTo(totalBilled * CALL_USD, 10);
    for (const run of report.runs) expect(run.usage.llmCalls).toBe(bills.get(run.id));
    // Three attempts cut off after their first call, then a whole one: five requests.
    expect(Math.max(...bills.values())).toBe(5);
  });

  it('perRun.maxLlmCalls holds across a kill: no task sends more requests than its cap', async () => {
    await killFixtureAfter([FIXTURE, dir, billing, '2'], 1, BATCH);
    const report = await resumeHere({ maxLlmCalls: 2 });
    const bills = billed();
    for (const run of report.runs) expect(bills.get(run.id) ?? 0).toBeLessThanOrEqual(2);
    // The restarted runs had one call left: their second was refused, not sent.
    const restarted = report.runs.filter((r) => r.resumed === 'restarted');
    expect(restarted.length).toBeGreaterThan(0);
    for (const run of restarted) expect(run.outcome).toBe('budget_exceeded');
  });
});
