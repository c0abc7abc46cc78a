// A batch killed with SIGKILL at a moment the test chooses — after exactly k runs ended, with
// three runs in flight inside their tool — in every durability mode with and without group
// commit, then resumed in this process.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runBatch } from '../../lib/batch/runBatch';
import { loadHistory } from '../../lib/history/loadHistory';
import { validateHistory } from '../../lib/history/validateHistory';
import { batchTasks } from '../fixtures/batch/batchTasks';
import { killBatchAfter } from '../helpers/killBatch';

jest.setTimeout(60_000);

let dir: string;
beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-killed-'))));
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const killAfter = (k: number, durability: string, groupCommit: boolean): Promise<string[]> =>
  killBatchAfter(dir, k, { durability, groupCommit });

describe('a batch killed with SIGKILL, then resumed', () => {
  it.each([
    [2, 'none', false],
    [5, 'turn', false],
    [8, 'move', false],
    [3, 'none', true],
    [6, 'turn', true],
    [9, 'move', true],
  ])(
    'after %i runs ended (durability %s, group commit %s): every task once, ended runs untouched and not run again',
    async (k, durability, group) => {
      const reportedFinished = await killAfter(k, durability, group);
      // Every run the killed batch reported ended has its whole file; keep it to compare.
      const files = new Map(reportedFinished.map((id) => [id, fs.readFileSync(path.join(dir, `${id}.jsonl`), 'utf8')]));
      for (const [id, text] of files) {
        const history = await loadHistory(path.join(dir, `${id}.jsonl`));
        expect({ id, interrupted: validateHistory(history.entries).interrupted, lines: text.endsWith('\n') }).toEqual({
          id,
          interrupted: undefined,
          lines: true,
        });
      }
      const built: string[] = [];
      const report = await runBatch(batchTasks(built), {
        historyDir: dir,
        concurrency: 3,
        logger: false,
        resume: true,
      });
      expect(report.runs.map((r) => r.id)).toEqual(batchTasks().map((t) => t.id));
      expect(report.runs.every((r) => r.outcome === 'end_of_turn')).toBe(true);
      // No run that had ended is run again, and its file is as it was.
      for (const id of reportedFinished) expect(built).not.toContain(id);
      for (const [id, text] of files) expect(fs.readFileSync(path.join(dir, `${id}.jsonl`), 'utf8')).toBe(text);
      expect(report.runs.filter((r) => r.resumed === 'finished').map((r) => r.id)).toEqual(
        expect.arrayContaining(reportedFinished),
      );
      // After the resume every task's file says how its run ended.
      for (const run of report.runs)
        expect(validateHistory((await loadHistory(run.historyFile!)).entries)).toMatchObject({ ok: true, issues: [] });
      for (const run of report.runs)
        expect(validateHistory((await loadHistory(run.historyFile!)).entries).interrupted).toBeUndefined();
    },
  );
});
