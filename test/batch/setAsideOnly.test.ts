// A resume sets a cut-off run's attempt aside (`<file>.interrupted`), then starts it again: killed
// between the two, the run has attempts set aside and no file. A reader of the folder then says
// the run was cut off and what it spent, from its newest attempt, never "skipped" with $0:
// inspect and watch alike.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runBatch, type BatchTask, type Pricing } from '../../lib/index';
import { readBatchFolder } from '../../lib/batch/reading/readBatchFolder';
import { formatBatchFolder } from '../../lib/cli/formatBatchFolder';
import { main } from '../../lib/cli/main';
import { watchBatch } from '../../lib/cli/watchBatch';
import { buildHtmlReport } from '../../lib/report/buildHtmlReport';
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

/** The run's file cut after its `k`th LLM answer (and `extra` lines more). */
function cutAfterAnswer(file: string, k: number, extra = 0): string {
  const lines = fs.readFileSync(file, 'utf8').split(/(?<=\n)/);
  const at = lines.flatMap((l, i) => (l.includes('"type":"llm"') ? [i] : []))[k - 1]!;
  return lines.slice(0, at + 1 + extra).join('');
}

/** `agent-sm watch <target>` started: what it printed so far, its last progress line, and how to stop it. */
function startWatch(target: string, stay: boolean) {
  let out = '';
  const stop = new AbortController();
  const io = { stdout: (t: string) => void (out += t), stderr: (t: string) => void (out += t), signal: stop.signal };
  const watching = watchBatch(target, { pollMs: 20, ...(stay ? { stay: true } : {}) }, io);
  return {
    watching,
    output: () => out,
    progress: () =>
      out
        .split('\n')
        .filter((l) => l.includes('progress:'))
        .at(-1) ?? out,
    stop: () => (stop.abort(), watching),
  };
}

/** `agent-sm watch <target>` until it ends (or `until` settles), and its last progress line. */
async function watchProgress(target: string, options: { stay?: boolean; until?: Promise<unknown> } = {}) {
  const watch = startWatch(target, options.stay === true);
  if (options.until !== undefined) {
    await options.until;
    await watch.stop();
  }
  await watch.watching;
  return watch.progress();
}

it('the HTML report of such a batch says the run was cut off and what it spent, not "never started"', async () => {
  await runBatch(threeCallTask(usage), { historyDir: dir, logger: false, pricing });
  const file = path.join(dir, 't.jsonl');
  fs.writeFileSync(`${file}.interrupted`, cutAfterAnswer(file, 2));
  fs.rmSync(file);
  const text = (await buildHtmlReport(dir)).html.replace(/<[^>]+>/g, ' ');
  expect(text).not.toContain('never started');
  expect(text).toContain('$0.0040');
});

it('watch --stay over such a run, then a resume: the attempt followed becomes an earlier one, counted once', async () => {
  await runBatch(threeCallTask(usage), { historyDir: dir, logger: false, pricing });
  const file = path.join(dir, 't.jsonl');
  fs.writeFileSync(`${file}.interrupted`, cutAfterAnswer(file, 2));
  fs.rmSync(file);
  const watch = startWatch(dir, true);
  const seen = async (text: string): Promise<void> => {
    for (let i = 0; !watch.output().includes(text); i++) {
      if (i === 1000) throw new Error(`watch never printed ${JSON.stringify(text)}; it printed:\n${watch.output()}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  };
  try {
    // The batch is over: the watch reads the attempt as the run, cut off.
    await seen('1 cut off, $0.0040 spent');
    // A resume writes the run's file: the attempt is an earlier one now, its money counted once.
    await runBatch(threeCallTask(usage), { historyDir: dir, logger: false, pricing, resume: true });
    await seen('1/1 finished');
    await seen('$0.0060 spent');
  } finally {
    await watch.stop();
  }
  expect(watch.progress()).toContain('1/1 finished, $0.0060 spent');
  expect(watch.output()).not.toMatch(/\$0\.0(0[7-9]|1)\d* spent/);
}, 30_000);

it('watch on one attempt set aside counts the attempts before it, never those after', async () => {
  await runBatch(threeCallTask(usage), { historyDir: dir, logger: false, pricing });
  const file = path.join(dir, 't.jsonl');
  // Attempt 1: its first answer and the records after it ($0.002).
  fs.writeFileSync(`${file}.interrupted`, cutAfterAnswer(file, 1, 3));
  fs.rmSync(file);
  // Attempt 2: resumed from it, cut after its third answer ($0.006 over both).
  await runBatch(threeCallTask(usage), { historyDir: dir, logger: false, pricing, resume: true });
  fs.writeFileSync(`${file}.interrupted.2`, cutAfterAnswer(file, 3));
  fs.rmSync(file);
  expect(await watchProgress(`${file}.interrupted`, { until: new Promise((r) => setTimeout(r, 400)) })).toContain(
    '$0.0020 spent',
  );
  expect(await watchProgress(`${file}.interrupted.2`, { until: new Promise((r) => setTimeout(r, 400)) })).toContain(
    '$0.0060 spent',
  );
});

it("another task's file named like an attempt is never taken for one", async () => {
  const [t] = threeCallTask(usage);
  const tasks: BatchTask[] = [t!, { ...t!, id: 't.jsonl.interrupted.x' }];
  await runBatch(tasks, { historyDir: dir, logger: false, pricing });
  fs.rmSync(path.join(dir, 't.jsonl'));
  const folder = await readBatchFolder(dir, { onWarning: () => undefined });
  expect(folder.runs.map((r) => [r.id, r.outcome])).toEqual([
    ['t', 'skipped'],
    ['t.jsonl.interrupted.x', 'end_of_turn'],
  ]);
  expect(folder.totals.costUsd).toBeCloseTo(0.006, 10);
});
