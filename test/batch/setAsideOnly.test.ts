// A resume sets a cut-off run's attempt aside (`<file>.interrupted`), then starts it again: killed
// between the two, the run has attempts set aside and no file. A reader of the folder then says
// the run was cut off and what it spent, from its newest attempt, never "skipped" with $0:
// inspect and watch alike.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runBatch, type Pricing } from '../../lib/index';
import { readBatchFolder } from '../../lib/batch/reading/readBatchFolder';
import { formatBatchFolder } from '../../lib/cli/formatBatchFolder';
import { main } from '../../lib/cli/main';
import { threeCallTask } from '../helpers/threeCallTask';

/** $1 a million tokens, in or out: each call $0.002. */
const pricing: Pricing = (u) => ((u.inputTokens ?? 0) + (u.outputTokens ?? 0)) * 1e-6;
const usage = { inputTokens: 1000, outputTokens: 1000 };

let dir: string;
beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-setaside-'))));
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

it('a run with attempts set aside and no file reads as cut off, with what its attempts spent', async () => {
  await runBatch(threeCallTask(usage), { historyDir: dir, logger: false, pricing });
  const file = path.join(dir, 't.jsonl');
  // Cut after two answers; a resume set that attempt aside and was killed before the next wrote its file.
  const lines = fs.readFileSync(file, 'utf8').split(/(?<=\n)/);
  const at = lines.flatMap((l, i) => (l.includes('"type":"llm"') ? [i] : []))[1]!;
  fs.writeFileSync(`${file}.interrupted`, lines.slice(0, at + 1).join(''));
  fs.rmSync(file);

  const folder = await readBatchFolder(dir, { onWarning: () => undefined });
  expect(folder.runs).toHaveLength(1);
  expect(folder.runs[0]).toMatchObject({
    id: 't',
    outcome: 'cut_off',
    file: `${file}.interrupted`,
    interrupted: [],
  });
  expect(folder.runs[0]!.reason).toMatch(
    /^its attempt set aside \(no attempt after it wrote a file\) ends inside a turn/,
  );
  expect(folder.totals.costUsd).toBeCloseTo(0.004, 10);
  expect(folder.totals.outcomes).toEqual({ cut_off: 1 });
  expect(formatBatchFolder(folder)).not.toContain('never started');
  // agent-sm watch on the batch, over, says the same money.
  let out = '';
  const io = { stdout: (t: string) => void (out += t), stderr: (t: string) => void (out += t) };
  expect(await main(['watch', dir], io)).toBe(0);
  expect(out).toContain('progress: 0/1 finished, 1 cut off, $0.0040 spent');

  // Resumed, it goes on from that attempt and its money counts once.
  const report = await runBatch(threeCallTask(usage), { historyDir: dir, logger: false, pricing, resume: true });
  expect(report.runs[0]).toMatchObject({ outcome: 'end_of_turn' });
  expect(report.runs[0]!.usage.costUsd).toBeCloseTo(0.006, 10);
  expect((await readBatchFolder(dir, { onWarning: () => undefined })).totals.costUsd).toBeCloseTo(0.006, 10);
});
