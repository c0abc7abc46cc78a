// A new batch written over a folder with `overwriteHistory` is not the batch that was there: the
// attempts a resume of that one set aside (`<file>.interrupted`, …) are set aside with its files,
// so a resume of the new batch neither serves their answers nor counts their spend. A FileStore
// batch of the same id sets them aside the same way.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runBatch, type Pricing } from '../../lib/index';
import { FileStore } from '../../lib/subpaths/batch';
import { setAsideOverwritten } from '../../lib/batch/keeping/setAsideOverwritten';
import { threeCallTask } from '../helpers/threeCallTask';

/** $1 a million tokens, in or out: each call $0.002. */
const pricing: Pricing = (u) => ((u.inputTokens ?? 0) + (u.outputTokens ?? 0)) * 1e-6;
const usage = { inputTokens: 1000, outputTokens: 1000 };

/** Task `t`: two calls that ask for a tool, then the last; every answer says which batch gave it. */
const task = (batch: string) => threeCallTask(usage, batch);

let dir: string;
beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-overwrite-'))));
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Cuts the run's file after its `n`th line of `type` (a crash there). */
function cutAfter(type: string, n: number): void {
  const file = path.join(dir, 't.jsonl');
  const lines = fs.readFileSync(file, 'utf8').split(/(?<=\n)/);
  const at = lines.flatMap((l, i) => (l.includes(`"type":"${type}"`) ? [i] : []))[n - 1]!;
  fs.writeFileSync(file, lines.slice(0, at + 1).join(''));
}

it('a resume of a batch written over another never serves, nor counts, the attempts that batch set aside', async () => {
  const options = { historyDir: dir, logger: false, pricing } as const;
  // Batch A: cut after two answers, resumed (its cut attempt set aside), and ended.
  await runBatch(task('A'), options);
  cutAfter('llm', 2);
  await runBatch(task('A'), { ...options, resume: true });
  expect(fs.existsSync(path.join(dir, 't.jsonl.interrupted'))).toBe(true);

  // Batch B over it: cut after its first reserve line, before any answer, then resumed.
  const b = await runBatch(task('B'), { ...options, overwriteHistory: true });
  const whole = b.runs[0]!.usage.costUsd;
  cutAfter('reserve', 1);
  const resumed = await runBatch(task('B'), { ...options, resume: true });
  expect(resumed.runs[0]).toMatchObject({ outcome: 'end_of_turn' });
  // Its answers are B's own, none served from A's attempt. Its money is B's: the three calls made
  // again, and the call in flight at the cut, which may have been billed (no bound held it: a
  // call of unknown cost). Before the change it was served A's answers ("A1", "A2").
  const file = fs.readFileSync(path.join(dir, 't.jsonl'), 'utf8');
  expect(file).not.toMatch(/"text":"A/);
  expect(file).not.toContain('"fromJournal":true');
  expect(file).toContain('"text":"B done"');
  expect(resumed.runs[0]!.usage.costUsd).toBeCloseTo(whole, 10);
  expect(resumed.runs[0]!.usage.unpricedCalls).toBe(1);
  // A's attempts are kept, set aside with its file: nothing is lost.
  expect(
    fs
      .readdirSync(dir)
      .filter((f) => f.includes('overwritten'))
      .sort(),
  ).toEqual(['t.jsonl.overwritten', 't.jsonl.overwritten.interrupted']);
});

it('a FileStore batch of the same id: an attempt set aside before the next wrote its file is a run held, refused or set aside', async () => {
  const store = new FileStore(dir);
  const options = { store, batchId: 'b', logger: false, pricing } as const;
  await runBatch(task('A'), options);
  // Killed after its attempt was set aside, before the next attempt wrote its file.
  const live = path.join(dir, 'b', 't.jsonl');
  fs.renameSync(live, `${live}.interrupted`);
  await expect(runBatch(task('B'), options)).rejects.toThrow(/already holds run "t"; give overwriteHistory: true/);
  const b = await runBatch(task('B'), { ...options, overwriteHistory: true });
  expect(b.runs[0]).toMatchObject({ outcome: 'end_of_turn' });
  expect(
    fs
      .readdirSync(path.join(dir, 'b'))
      .filter((f) => f.startsWith('t.jsonl'))
      .sort(),
  ).toEqual(['t.jsonl', 't.jsonl.overwritten.interrupted']);
});

it('a run set aside twice with its attempts alone keeps both: nothing set aside is replaced', () => {
  const live = path.join(dir, 'a.jsonl');
  fs.writeFileSync(`${live}.interrupted`, 'first batch\n');
  setAsideOverwritten(live);
  fs.writeFileSync(`${live}.interrupted`, 'second batch\n');
  setAsideOverwritten(live);
  expect(fs.readFileSync(`${live}.overwritten.interrupted`, 'utf8')).toBe('first batch\n');
  expect(fs.readFileSync(`${live}.overwritten.2.interrupted`, 'utf8')).toBe('second batch\n');
  expect(fs.readdirSync(dir).sort()).toEqual(['a.jsonl.overwritten.2.interrupted', 'a.jsonl.overwritten.interrupted']);
});
