// A resume reports each run's money as the three figures apart, as the run's own report and the
// folder's readers do: billed, uncertain (charged at its hold) and released (let go, not billed).
// The task's one call is refused with a 429 (its $0.01 hold released), fails with a 500 after it
// left (its $0.01 hold charged, uncertain), then is answered ($0.0006 billed).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runBatch, type BatchOptions } from '../../lib/index';
import { readBatchFolder } from '../../lib/batch/reading/readBatchFolder';
import { ONE_RUN, THREE_FIGURES, threeFiguresTask } from '../helpers/threeFigures';

let dir: string;
beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-three-figures-'))));
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const options = (): BatchOptions => ({ ...THREE_FIGURES, historyDir: dir, logger: false });

/** The three figures of a run's usage, or of a folder reader's run. */
function figures(money: { costUsd: number; uncertainUsd: number; releasedUsd: number }): typeof ONE_RUN {
  const round = (usd: number): number => Math.round(usd * 1e10) / 1e10;
  return {
    costUsd: round(money.costUsd),
    uncertainUsd: round(money.uncertainUsd),
    releasedUsd: round(money.releasedUsd),
  };
}

it('a run found ended by a resume keeps its three figures apart, from the cache and from its file', async () => {
  const first = await runBatch([threeFiguresTask('t')], options());
  expect(figures(first.runs[0]!.usage)).toEqual(ONE_RUN);
  const found = await runBatch([threeFiguresTask('t')], { ...options(), resume: true });
  expect(found.runs[0]!.resumed).toBe('finished');
  expect(figures(found.runs[0]!.usage)).toEqual(ONE_RUN);
  expect(figures(found.totals)).toEqual(ONE_RUN);
  expect(found.runs[0]!.uncertain).toEqual(first.runs[0]!.uncertain);
  fs.rmSync(path.join(dir, 'ended-runs.cache'));
  const read = await runBatch([threeFiguresTask('t')], { ...options(), resume: true });
  expect(figures(read.runs[0]!.usage)).toEqual(ONE_RUN);
  expect(read.runs[0]!.uncertain).toEqual(first.runs[0]!.uncertain);
});

it('a run cut off after its 429 keeps the hold it released when it is resumed: the report and the folder say so', async () => {
  await runBatch([threeFiguresTask('t')], options());
  // Cut where a kill after the 500 leaves it: the third attempt reserved, in flight, not answered.
  const file = path.join(dir, 't.jsonl');
  const lines = fs.readFileSync(file, 'utf8').split(/(?<=\n)/);
  const reserves = lines.flatMap((l, i) => (l.startsWith('{"type":"reserve"') ? [i] : []));
  expect(reserves).toHaveLength(3);
  fs.writeFileSync(file, lines.slice(0, reserves[2]! + 1).join(''));
  const resumed = await runBatch([threeFiguresTask('t')], { ...options(), resume: true });
  const run = resumed.runs[0]!;
  expect(run.outcome).toBe('end_of_turn');
  // It restarts (no answer in its journal) and spends as the first attempt did. The attempt cut
  // off released the 429's hold and charged the 500's and the call in flight at the cut (it may
  // have been billed): each figure counts both attempts, in the report and in the folder.
  expect(run.resumed).toBe('restarted');
  expect(figures(run.usage)).toEqual({ costUsd: 0.0306, uncertainUsd: 0.03, releasedUsd: 0.02 });
  const folder = await readBatchFolder(dir, { onWarning: () => undefined });
  expect(figures(folder.runs[0]!)).toEqual(figures(run.usage));
  const found = await runBatch([threeFiguresTask('t')], { ...options(), resume: true });
  expect(figures(found.runs[0]!.usage)).toEqual(figures(run.usage));
});

it('a run cut off that a spent cap skips on resume keeps what its attempt spent, the figures apart and why', async () => {
  await runBatch([threeFiguresTask('t')], options());
  const file = path.join(dir, 't.jsonl');
  const lines = fs.readFileSync(file, 'utf8').split(/(?<=\n)/);
  const reserves = lines.flatMap((l, i) => (l.startsWith('{"type":"reserve"') ? [i] : []));
  fs.writeFileSync(file, lines.slice(0, reserves[2]! + 1).join(''));
  // The attempt cut off charged $0.02 (the 500's hold, and the call in flight at the cut): a $0.02 cap is spent.
  const skipped = await runBatch([threeFiguresTask('t')], {
    ...options(),
    resume: true,
    total: { maxCostUsd: 0.02, strict: true },
  });
  const run = skipped.runs[0]!;
  expect(run.outcome).toBe('skipped');
  expect(figures(run.usage)).toEqual({ costUsd: 0.02, uncertainUsd: 0.02, releasedUsd: 0.01 });
  expect(run.uncertain).toEqual([
    { why: expect.stringMatching(/500/), calls: 1 },
    { why: 'reserved, and no response recorded (in flight when the file ended)', calls: 1 },
  ]);
  const folder = await readBatchFolder(dir, { onWarning: () => undefined });
  expect(figures(folder.runs[0]!)).toEqual(figures(run.usage));
  expect(folder.runs[0]!.uncertain).toEqual(run.uncertain);
});

it("a run cut off twice keeps every attempt's released holds, one cut before any record said so", async () => {
  await runBatch([threeFiguresTask('t')], options());
  const file = path.join(dir, 't.jsonl');
  const cutAfter = (at: (lines: string[]) => number): void => {
    const lines = fs.readFileSync(file, 'utf8').split(/(?<=\n)/);
    fs.writeFileSync(file, lines.slice(0, at(lines) + 1).join(''));
  };
  // The first attempt: the 429 released, the 500 charged, the third call in flight at the cut.
  cutAfter((lines) => lines.flatMap((l, i) => (l.startsWith('{"type":"reserve"') ? [i] : []))[2]!);
  await runBatch([threeFiguresTask('t')], { ...options(), resume: true });
  // The second: cut right after the ledger line of its 429, before any record carried the release.
  cutAfter((lines) => lines.findIndex((l) => l.startsWith('{"type":"llm"') && l.includes('"releasedUsd"')));
  const resumed = await runBatch([threeFiguresTask('t')], { ...options(), resume: true });
  const run = resumed.runs[0]!;
  expect(run.outcome).toBe('end_of_turn');
  // Each attempt's 429 let $0.01 go: three attempts, $0.03 released; the uncertain money is the
  // first attempt's 500 and its call in flight, and the last attempt's 500.
  expect(figures(run.usage)).toEqual({ costUsd: 0.0306, uncertainUsd: 0.03, releasedUsd: 0.03 });
  const folder = await readBatchFolder(dir, { onWarning: () => undefined });
  expect(figures(folder.runs[0]!)).toEqual(figures(run.usage));
  const found = await runBatch([threeFiguresTask('t')], { ...options(), resume: true });
  expect(figures(found.runs[0]!.usage)).toEqual(figures(run.usage));
});
