// `agent-sm diff <folderA> <folderB>` on two batches of 1,000 runs each, against reading both
// folders as `agent-sm inspect <folder>` does (readBatchFolder, each run file streamed once).
// Target: the diff takes at most 2× the time of reading both folders, measured in the same run,
// round by round (the two alternate, the first round a warm-up left out).
//
// Batch A is 1,000 scripted runs (a tool call, then an answer: 17 lines a run, with journal and
// ledger). Batch B is the same batch rerun with one change in every tenth task's answer and
// every fiftieth task's model failing (regressions), so the diff has changes to sort and
// divergences to look up (the first 20 it lists), as after a real change.
//
// The diff is the command itself (`main(['diff', A, B])` of lib/cli/main.ts, its output
// discarded), run in this process as the readers are: the same code the executable bundles.
//
//   npm run bench -- diff                 through the runner
//   npx tsx bench/diff.bench.ts           alone
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readBatchFolder } from '../lib/batch/reading/readBatchFolder';
import { main } from '../lib/cli/main';
import { failed, printSuite, ratioFigure, ratioTarget, scaled, type SuiteResult } from './harness';
import { loadLibrary } from './library';

const RUNS = Number(process.env.BENCH_DIFF_RUNS ?? scaled(1000, 300));
// 21, not 7: with 7 pairs the median's 90% interval is all of them (bench/medianInterval.ts),
// 1.57–2.47× in a run whose median read 1.79× against a target of 2×.
const ROUNDS = scaled(21, 3);
const TARGET = 2;

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Runs the batch into `historyDir`; `changed` B's variant (every tenth answer other, every fiftieth model failing). */
export async function writeBatch(historyDir: string, changed: boolean): Promise<void> {
  const { runBatch, createScriptedAgent } = loadLibrary();
  let t = Date.UTC(2026, 10, 22, 12, 0, 0);
  const tasks = Array.from({ length: RUNS }, (_, i) => {
    const id = `task-${String(i).padStart(4, '0')}`;
    const other = changed && i % 10 === 3;
    const fails = changed && i % 50 === 7;
    const failure = { error: 'HTTP 503: the model is overloaded' };
    return {
      id,
      input: `fix the bug in ${id}`,
      agent: () =>
        createScriptedAgent({
          sleep: () => tick(),
          replies: [
            {
              text: 'looking',
              toolCalls: [{ id: `${id}-1`, name: 'grep', input: { pattern: 'bug' } }],
              usage: { costUsd: 0.01, inputTokens: 100, outputTokens: 20 },
            },
            ...(fails
              ? [failure, failure, failure]
              : [
                  other
                    ? { text: 'I could not find it', usage: { costUsd: 0.03, inputTokens: 150, outputTokens: 60 } }
                    : { text: 'fixed', usage: { costUsd: 0.02, inputTokens: 150, outputTokens: 30 } },
                ]),
          ],
          tools: { grep: { output: `${id}.ts:3: the bug` } },
        }),
    };
  });
  await runBatch(tasks, { logger: false, historyDir, concurrency: 16, sleep: () => tick(), clock: () => (t += 3) });
}

const seconds = async (work: () => Promise<unknown>): Promise<number> => {
  const t0 = performance.now();
  await work();
  return (performance.now() - t0) / 1000;
};

export async function run(): Promise<SuiteResult> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'asm-bench-diff-'));
  try {
    const a = path.join(dir, 'a');
    const b = path.join(dir, 'b');
    const t0 = performance.now();
    await writeBatch(a, false);
    await writeBatch(b, true);
    console.log(
      `  wrote two batches of ${RUNS.toLocaleString('en-US')} runs in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
    );
    const quiet = { stdout: () => undefined, stderr: (text: string) => void process.stderr.write(text) };
    const read = async (): Promise<void> => {
      await readBatchFolder(a, { onWarning: () => undefined });
      await readBatchFolder(b, { onWarning: () => undefined });
    };
    const diff = async (): Promise<void> => {
      const code = await main(['diff', a, b], quiet);
      if (code !== 1) throw new Error(`agent-sm diff exited ${code}, expected 1 (the batches differ)`);
    };
    const reads: number[] = [];
    const diffs: number[] = [];
    for (let round = 0; round <= ROUNDS; round++) {
      // Alternate which goes first, so neither always finds the page cache warmer.
      let r2: number;
      let d2: number;
      if (round % 2 === 0) {
        r2 = await seconds(read);
        d2 = await seconds(diff);
      } else {
        d2 = await seconds(diff);
        r2 = await seconds(read);
      }
      if (round === 0) continue; // warm-up
      reads.push(r2);
      diffs.push(d2);
      console.log(
        `  round ${round}/${ROUNDS}  read both: ${r2.toFixed(3)} s  diff: ${d2.toFixed(3)} s  (${(d2 / r2).toFixed(2)}×)`,
      );
    }
    const ratios = diffs.map((d, i) => d / reads[i]!);
    const figure = ratioFigure(ratios);
    const med = (xs: number[]): string => `${[...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!.toFixed(3)} s`;
    return {
      suite: 'diff',
      columns: ['median', 'min – max'],
      rows: [
        {
          label: `read both folders (${RUNS.toLocaleString('en-US')} runs each)`,
          cells: [med(reads), `${Math.min(...reads).toFixed(3)} – ${Math.max(...reads).toFixed(3)} s`],
        },
        {
          label: 'agent-sm diff A B',
          cells: [med(diffs), `${Math.min(...diffs).toFixed(3)} – ${Math.max(...diffs).toFixed(3)} s`],
        },
      ],
      targets: [ratioTarget('diff of two batch folders vs reading both', figure, TARGET, 'reading both folders')],
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (require.main === module) run().then(printSuite, failed);
