// `agent-sm inspect` and `agent-sm validate` as a user runs them — the bundled CLI
// (`npm run build`'s cli.cjs, built into .bench-tmp/) in a process of its own — on a
// 5,000,000-line history file, beside `jq` reading the same file once (every line parsed,
// one field tested), when jq is installed.
//
// The file is written first by a real machine and JsonlHistorySink (bench/summarizeHistory.bench.ts's
// workload: tool-use turns, failures, forced cancels). Each command runs RUNS times, in
// turn; the figures are the medians of wall time and of peak RSS (GNU time's %M when
// /usr/bin/time exists, else not shown), with their range.
//
// Targets are ratios to commands timed in the same run, round by round: inspect and validate
// at least 3× faster than jq reading the file once; beside them, `wc -l` on the same file shows
// the I/O floor (reading every byte, nothing parsed). Peak RSS stays under 100 MiB: memory
// does not depend on the machine's speed.
//
//   npm run bench -- cli                         through the runner
//   npx tsx bench/cli.bench.ts                   alone
//   BENCH_CLI_LINES=1000000 npx tsx bench/cli.bench.ts   a smaller file
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  failed,
  formatBytes,
  formatRatio,
  median,
  printSuite,
  ratioFigure,
  ratioTarget,
  ROOT,
  scaled,
  type SuiteResult,
} from './harness';
import { writeHistory } from './summarizeHistory.bench';
import { bundle } from './bundle';
import { packageBuildOptions } from './library';

const LINES = Number(process.env.BENCH_CLI_LINES ?? scaled(5_000_000, 500_000));
const RUNS = scaled(3, 2);
const TARGET_VS_JQ = 3;
const TARGET_RSS = 100 * 1024 * 1024;
const CLI_DIR = path.join(ROOT, '.bench-tmp', 'cli-build');
const GNU_TIME = '/usr/bin/time';

async function buildCli(): Promise<string> {
  await bundle({ cli: 'lib/cli/bin.ts' }, CLI_DIR, () => packageBuildOptions('cli'));
  return path.join(CLI_DIR, 'cli.cjs');
}

function findJq(): string | undefined {
  const r = spawnSync('sh', ['-c', 'command -v jq'], { encoding: 'utf8' });
  const p = r.stdout.trim();
  return r.status === 0 && p !== '' ? p : undefined;
}

interface RunFigure {
  readonly seconds: number;
  readonly rss?: number;
}

/** Runs `argv` with stdout discarded; wall time from here, peak RSS from GNU time when present. */
function timeCommand(argv: readonly string[], okCodes: readonly number[]): RunFigure {
  const gnu = existsSync(GNU_TIME);
  const cmd = gnu ? [GNU_TIME, '-f', '%M', ...argv] : [...argv];
  const t0 = process.hrtime.bigint();
  const r = spawnSync(cmd[0]!, cmd.slice(1), {
    stdio: ['ignore', 'ignore', 'pipe'],
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  if (r.status === null || !okCodes.includes(r.status))
    throw new Error(`${argv.join(' ')} exited ${r.status ?? r.signal}: ${r.stderr.slice(-2000)}`);
  if (!gnu) return { seconds };
  const last = r.stderr.trim().split('\n').at(-1) ?? '';
  const kb = Number(last);
  return Number.isFinite(kb) ? { seconds, rss: kb * 1024 } : { seconds };
}

export async function run(): Promise<SuiteResult> {
  const cli = await buildCli();
  const jq = findJq();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'asm-bench-cli-'));
  try {
    const file = path.join(dir, 'run.jsonl');
    const t0 = performance.now();
    const lines = writeHistory(file, LINES);
    const bytes = statSync(file).size;
    console.log(
      `  wrote ${lines.toLocaleString('en-US')} lines (${formatBytes(bytes)}) in ${((performance.now() - t0) / 1000).toFixed(1)} s; CLI: ${path.relative(ROOT, cli)}; jq: ${jq ?? 'not installed (apt-get install jq to compare)'}`,
    );
    const commands: { name: string; argv: string[]; ok: number[] }[] = [
      { name: 'agent-sm inspect', argv: [process.execPath, cli, 'inspect', file], ok: [0] },
      { name: 'agent-sm validate', argv: [process.execPath, cli, 'validate', file], ok: [0, 1] },
      { name: 'wc -l (the I/O floor)', argv: ['wc', '-l', file], ok: [0] },
      ...(jq === undefined
        ? []
        : [
            {
              name: `jq (select(.to == "Error") | .seq)`,
              argv: [jq, '-c', 'select(.to == "Error") | .seq', file],
              ok: [0],
            },
          ]),
    ];
    const results = new Map<string, RunFigure[]>(commands.map((c) => [c.name, []]));
    for (let r = 0; r < RUNS; r++) {
      for (const c of commands) {
        const f = timeCommand(c.argv, c.ok);
        results.get(c.name)!.push(f);
        console.log(
          `  run ${r + 1}/${RUNS}  ${c.name}: ${f.seconds.toFixed(2)} s${f.rss === undefined ? '' : `, peak RSS ${formatBytes(f.rss)}`}`,
        );
      }
    }
    const fig = (name: string): { s: number; range: string; rss?: number; linesPerS: number } => {
      const list = results.get(name)!;
      const secs = list.map((f) => f.seconds);
      const rss = list.flatMap((f) => (f.rss === undefined ? [] : [f.rss]));
      const s = median(secs);
      return {
        s,
        range: `${Math.min(...secs).toFixed(2)} – ${Math.max(...secs).toFixed(2)} s`,
        ...(rss.length > 0 ? { rss: Math.max(...rss) } : {}),
        linesPerS: lines / s,
      };
    };
    const jqName = commands.find((c) => c.name.startsWith('jq'))?.name;
    const secs = (name: string): number[] => results.get(name)!.map((f) => f.seconds);
    const rows = commands.map((c) => {
      const f = fig(c.name);
      return {
        label: c.name,
        cells: [
          `${f.s.toFixed(2)} s`,
          f.range,
          `${(f.linesPerS / 1e6).toFixed(2)} M`,
          f.rss === undefined ? 'n/a' : formatBytes(f.rss),
        ],
      };
    });
    const wc = secs('wc -l (the I/O floor)');
    const targets = ['agent-sm inspect', 'agent-sm validate'].flatMap((name) => {
      const f = fig(name);
      const mine = secs(name);
      console.log(
        `  ${name}: ${formatRatio(median(mine.map((v, i) => v / wc[i]!)))} the time of wc -l, round by round`,
      );
      return [
        jqName === undefined
          ? {
              name: `${name} vs jq`,
              goal: `≥ ${formatRatio(TARGET_VS_JQ)} faster than jq`,
              measured: 'jq is not installed (apt-get install jq)',
              pass: false,
            }
          : ratioTarget(
              `${name}, ${lines.toLocaleString('en-US')} lines: jq's time ÷ ours`,
              ratioFigure(secs(jqName).map((j, i) => j / mine[i]!)),
              TARGET_VS_JQ,
              '(floor: jq reading the same file once, same round)',
              true,
            ),
        {
          name: `${name}: peak RSS`,
          goal: '≤ 100 MiB',
          measured: f.rss === undefined ? 'n/a (no /usr/bin/time)' : formatBytes(f.rss),
          pass: f.rss === undefined || f.rss <= TARGET_RSS,
        },
      ];
    });
    return { suite: 'cli', columns: ['median', `range (${RUNS} runs)`, 'lines/s', 'peak RSS'], rows, targets };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (require.main === module) run().then(printSuite, failed);
