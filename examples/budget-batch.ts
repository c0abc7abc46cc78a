/**
 * `npm run example:batch`: fifty scripted agent tasks (one per failing test) run eight at a
 * time under a $0.20 cap per run and a $1.50 cap for the whole batch, which runs out
 * part-way: runs in flight stop as `budget_exceeded`, the rest are `skipped`. One task's LLM
 * is overloaded on every attempt and one task's sandbox fails to boot; the batch goes on.
 * Offline, no keys. A progress bar on a terminal, plain lines otherwise (CI, `| cat`); then
 * the summary, where the history of a failed run is with the command to inspect it, and last
 * the path of the batch's HTML report.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import cliProgress from 'cli-progress';
import { buildHtmlReport } from '../lib/subpaths/report';
import {
  createScriptedAgent,
  formatBatchReport,
  runBatch,
  type BatchProgress,
  type BatchReport,
  type BatchTask,
  type ScriptedReply,
  type Sleep,
} from '../lib/index';
import { setTimeout as delay } from 'node:timers/promises';

// Waits, or stops waiting when the signal aborts (the adapter's cancellation grace relies on that).
const realSleep: Sleep = (ms, signal) => delay(ms, undefined, signal ? { signal } : {}).catch(() => undefined);

export interface BatchExampleOptions {
  /** How the scripted agents and the runs wait. Default: real time. */
  sleep?: Sleep;
  /** Where lines go. Default: console.log. */
  print?: (line: string) => void;
  /** Draw a progress bar (true) or print a line per run. Default: whether stdout is a terminal. */
  tty?: boolean;
  /** Where history files go. Default: a new directory under the OS temp dir. */
  historyDir?: string;
}

const TOTAL_CAP_USD = 1.5;
const PER_RUN_CAP_USD = 0.2;
const TESTS = [
  'parse-dates',
  'lexer-unicode',
  'cache-eviction',
  'retry-backoff',
  'csv-quotes',
  'auth-refresh',
  'tz-offsets',
  'json-bigint',
  'path-join',
  'rate-limit',
];

/** A small seeded generator (mulberry32): the same fifty tasks on every run. */
function seeded(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Fifty tasks of varied length (0–5 tool rounds) and cost ($0.005–$0.045 per LLM call), 20–120 ms per call. */
export function exampleTasks(wait: Sleep): BatchTask[] {
  const random = seeded(42);
  const between = (lo: number, hi: number): number => lo + Math.floor(random() * (hi - lo + 1));
  return Array.from({ length: 50 }, (_, i): BatchTask => {
    const id = `fix-${String(i + 1).padStart(2, '0')}-${TESTS[i % TESTS.length]!}`;
    const input = `The test "${TESTS[i % TESTS.length]!}" fails. Find out why and fix it.`;
    if (i === 6) {
      return {
        id,
        input,
        agent: () => {
          throw new Error('sandbox failed to boot: no space left on device');
        },
      };
    }
    const rounds = between(0, 5);
    const reply = (last: boolean): ScriptedReply => {
      const inputTokens = between(1_500, 9_000);
      const outputTokens = between(40, 600);
      const usage = { inputTokens, outputTokens, costUsd: Math.round(between(5, 45)) / 1000 };
      const delayMs = between(20, 120);
      return last
        ? { text: `Fixed ${TESTS[i % TESTS.length]!}; the test passes.`, usage, delayMs }
        : {
            toolCalls: [
              {
                id: `call-${i}-${random().toString(36).slice(2, 8)}`,
                name: random() < 0.5 ? 'run_tests' : 'edit_file',
              },
            ],
            usage,
            delayMs,
          };
    };
    let replies: ScriptedReply[] = [...Array.from({ length: rounds }, () => reply(false)), reply(true)];
    // The LLM is overloaded on every attempt: the run ends in Error after its retries.
    if (i === 3) replies = Array.from({ length: 3 }, () => ({ error: '529 overloaded_error', delayMs: 40 }));
    // A big refactor: eight expensive rounds, stopped by its own per-run cap.
    if (i === 1)
      replies = Array.from({ length: 8 }, () => ({
        ...reply(false),
        usage: { inputTokens: 12_000, outputTokens: 900, costUsd: 0.045 },
      }));
    return {
      id,
      input,
      // A factory: each agent is made when its run starts, not all fifty up front.
      agent: () =>
        createScriptedAgent({
          sleep: wait,
          replies,
          tools: {
            run_tests: { output: '1 failing, 41 passing', delayMs: between(10, 60) },
            edit_file: { output: 'edited 1 file', delayMs: 5 },
          },
        }),
    };
  });
}

const usd = (n: number): string => `$${n.toFixed(2)}`;

export async function runBatchExample(options: BatchExampleOptions = {}): Promise<BatchReport> {
  const wait = options.sleep ?? realSleep;
  const print = options.print ?? ((line: string) => console.log(line));
  const tty = options.tty ?? process.stdout.isTTY === true;
  const historyDir = options.historyDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-batch-'));
  const tasks = exampleTasks(wait);

  print(
    `Running ${tasks.length} agent tasks, 8 at a time, ${usd(PER_RUN_CAP_USD)} per run, ${usd(TOTAL_CAP_USD)} for the batch.`,
  );
  const bar = tty
    ? new cliProgress.SingleBar(
        {
          format: '{bar} {value}/{total} runs | {running} running | spent {spent} of {cap} | {last}',
          stream: process.stdout,
          hideCursor: true,
          clearOnComplete: false,
        },
        cliProgress.Presets.shades_classic,
      )
    : undefined;
  bar?.start(tasks.length, 0, { running: 0, spent: usd(0), cap: usd(TOTAL_CAP_USD), last: '' });

  const onProgress = (p: BatchProgress): void => {
    const spent = `${usd(p.usage.costUsd)} of ${usd(TOTAL_CAP_USD)}`;
    if (bar !== undefined) {
      const last =
        p.event.type === 'finished'
          ? `${p.event.run.id}: ${p.event.run.outcome}`
          : p.event.type === 'skipped'
            ? `${p.event.count} skipped`
            : '';
      bar.update(p.done, { running: p.running, spent: usd(p.usage.costUsd), ...(last === '' ? {} : { last }) });
      return;
    }
    const counter = `[${String(p.done).padStart(2)}/${p.total}]`;
    if (p.event.type === 'finished') {
      const { run } = p.event;
      print(
        `${counter} ${run.id.padEnd(24)} ${run.outcome.padEnd(15)} ${usd(run.usage.costUsd)}  (running ${p.running}, spent ${spent})`,
      );
    } else if (p.event.type === 'skipped') {
      print(`${counter} skipped ${p.event.count} runs not yet started: ${p.event.message}`);
    }
  };

  const report = await runBatch(tasks, {
    concurrency: 8,
    // Plain caps (the scripted loops bound no call): passed by at most one response per run in flight.
    perRun: { maxCostUsd: PER_RUN_CAP_USD, strict: false },
    total: { maxCostUsd: TOTAL_CAP_USD, strict: false },
    retry: { retries: 2, baseDelayMs: 20 },
    historyDir,
    sleep: wait,
    onProgress,
    logger: false, // the summary below says it all; drop this line to see winston's warnings on stderr
  });
  bar?.stop();

  print('');
  print(formatBatchReport(report));

  // The most telling failure: a run stopped by a budget mid-way, else any that did not end well.
  const failed =
    report.runs.find((r) => r.outcome === 'budget_exceeded' && r.historyFile !== undefined) ??
    report.runs.find((r) => r.outcome !== 'end_of_turn' && r.historyFile !== undefined);
  print('');
  print(`History files: ${historyDir}`);
  if (failed !== undefined) {
    print(`A failed run (${failed.id}, ${failed.outcome}): ${failed.historyFile!}`);
    print('Inspect it with:');
    print(`  npx agent-sm inspect ${failed.historyFile!}            (with the package installed)`);
    print(`  npm run agent-sm -- inspect ${failed.historyFile!}   (in a clone of this repository)`);
  }

  // The whole batch as one HTML page: spend against the cap, outcomes, every run's timeline.
  // `agent-sm report <historyDir>` makes the same page from the folder alone (without the
  // runs that never wrote a history: skipped, or whose agent did not start).
  const page = await buildHtmlReport(historyDir, { batch: report });
  const reportFile = path.join(historyDir, 'report.html');
  fs.writeFileSync(reportFile, page.html);
  print('');
  print(`The same folder as a page: npx agent-sm report ${historyDir}`);
  print(`Batch report (open it in a browser): ${reportFile}`);
  return report;
}

if (require.main === module) {
  runBatchExample().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
