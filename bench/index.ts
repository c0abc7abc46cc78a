// `npm run bench`: every benchmark in one run on one machine, then one summary: a PASS, MISS
// or UNSETTLED line per target with its figure and spread. Not part of `npm test`.
//
//   npm run bench                          all suites
//   npm run bench -- transition memory     only the suites named
//   npm run bench -- --quick               every suite, short (fewer samples, smaller files):
//                                          under two minutes, for checking one change; the
//                                          full run is the reference and the source of docs/benchmarks.md
//   npm run bench -- --markdown            also print the summary as Markdown
//   npm run bench -- --write-docs        write the summary into docs/benchmarks.md's generated
//                                          block (between the bench:begin/end markers)
//   npm run bench -- --source              time lib/ through tsx instead of the tsup bundle
//   BENCH_ROUNDS=5 npm run bench           more rounds of the per-move suite (default 3)
//
// The library timed is the bundle `npm run build` would make (see bench/library.ts), built
// first into .bench-tmp/ and handed to the suites through BENCH_LIB.
//
// Each suite runs in a process of its own (bench/suiteChild.ts) with `--expose-gc`, so heap
// and peak-memory figures start from a clean heap and one suite cannot disturb another.
//
// A suite is a file in bench/ exporting `async function run(): Promise<SuiteResult | void>`
// (SuiteResult is in bench/harness.ts). A suite that returns a SuiteResult has its targets in
// the summary; one that returns nothing prints its own figures. Suites marked optional are
// skipped, with a note, while their file does not exist yet.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { formatTable, printSuite, ROOT, runInChild, verdict, type SuiteResult } from './harness';
import { buildLibrary, describeLibrary } from './library';
import { speedLine, speedProbe } from './speedProbe';

interface SuiteSpec {
  readonly name: string;
  readonly title: string;
  readonly file: string;
  /** A missing optional suite is skipped with a note; a missing required one is an error. */
  readonly optional: boolean;
}

const SUITES: readonly SuiteSpec[] = [
  {
    name: 'transition',
    title: 'One move: × a fair floor on the tool-use turn (13 moves, repeated), Date.now and a counter clock',
    file: 'transition.bench.ts',
    optional: false,
  },
  {
    name: 'machine',
    title: 'New machine: heap held and time to build, default options',
    file: 'machine.bench.ts',
    optional: false,
  },
  {
    name: 'memory',
    title: 'Memory: bounded history over 1,000,000 moves; bytes per record unbounded',
    file: 'memory.bench.ts',
    optional: false,
  },
  {
    name: 'batch',
    title: 'runBatch: runs/s with zero-latency agents, concurrency 16 and 256, with and without historyDir',
    file: 'batch.bench.ts',
    optional: false,
  },
  {
    name: 'sink',
    title: 'JSON Lines sink: cost per move, per durability mode and with group commit',
    file: 'sink.bench.ts',
    optional: false,
  },
  {
    name: 'adapter',
    title: 'Adapter: AgentWithStateMachine overhead per move vs the bare scripted loop',
    file: 'adapter.bench.ts',
    optional: true,
  },
  {
    name: 'summarizeHistory',
    title: 'Inspection in code: summarize a 1,000,000-line history file',
    file: 'summarizeHistory.bench.ts',
    optional: true,
  },
  {
    name: 'meter',
    title:
      'The metered fetch: the openai client through it, inside an observed run, against a passthrough fetch told by hand (CPU time; callgrind instructions when within noise)',
    file: 'meter.bench.ts',
    optional: false,
  },
  {
    name: 'coldstart',
    title:
      'Cold start: require the main entry in a fresh process, against eventemitter3 and the date-fns functions it uses',
    file: 'coldstart.bench.ts',
    optional: false,
  },
  {
    name: 'diff',
    title: 'agent-sm diff: two batch folders of 1,000 runs each, against reading both folders',
    file: 'diff.bench.ts',
    optional: false,
  },
  {
    name: 'cli',
    title: 'Inspection as the CLI: agent-sm inspect and validate on a 5,000,000-line file, beside jq',
    file: 'cli.bench.ts',
    optional: false,
  },
  {
    name: 'durability',
    title: 'History files: cost per move of each durability mode; reader lines/s',
    file: 'durability.bench.ts',
    optional: true,
  },
  {
    name: 'durable',
    title:
      'Durable runs: the journal per LLM call and per tool call against the same run without it; resume of a 1,000-run folder against reading its files',
    file: 'durable.bench.ts',
    optional: false,
  },
  {
    name: 'otel',
    title: 'OpenTelemetry: what traceAgent adds per turn (in-memory exporter)',
    file: 'otel.bench.ts',
    optional: true,
  },
  {
    name: 'strict',
    title:
      'Strict caps and the money ledger: overhead per LLM call, unspent share of the cap, throughput near it; ledger fsync vs a bare write + fsync',
    file: 'strict.bench.ts',
    optional: false,
  },
  {
    name: 'mirror',
    title: 'Framework mirror: mirrorAISDK on an AI SDK generateText loop vs the loop alone (ratio per run)',
    file: 'mirror.bench.ts',
    optional: true,
  },
  {
    name: 'mirrorledger',
    title:
      "Framework mirrors with the ledger on, per step: AI SDK, LangGraph, OpenAI Agents SDK vs the loop alone (+ the ledger's fsync, in place)",
    file: 'mirrorLedger.bench.ts',
    optional: false,
  },
  {
    name: 'store',
    title:
      'PostgresStore: per move and per LLM call in each durability mode vs bare pg writing the same rows with the same commits; continuing a cut-off run vs a SELECT of its rows; a batch on the store beside files',
    file: 'store.bench.ts',
    optional: false,
  },
  {
    name: 'turncore',
    title:
      "Turn core: the adapter's turn and the mirror's step, this round's bundle beside the round start's, same process",
    file: 'turnCore.bench.ts',
    optional: false,
  },
  {
    name: 'distributed',
    title:
      'Distributed batches: runs/s with 1, 2, 4 worker processes, latency-bound against in-process runBatch; Redis round trips and latency per budget check',
    file: 'distributed.bench.ts',
    optional: true,
  },
];

interface Outcome {
  readonly spec: SuiteSpec;
  readonly status: 'ran' | 'skipped' | 'failed';
  readonly result?: SuiteResult;
  readonly note?: string;
}

function machineInfo(): string[] {
  const cpus = os.cpus();
  const model = cpus[0]?.model.trim() ?? 'unknown CPU';
  let commit = 'unknown';
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], {
      cwd: ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
    // bench/ too: a suite changed since the commit measures something else.
    const dirty = execFileSync(
      'git',
      ['status', '--porcelain', '--untracked-files=no', '--', 'lib', 'states', 'bench'],
      {
        cwd: ROOT,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      },
    );
    if (dirty.trim() !== '') commit += ' + uncommitted changes in lib/, states/ or bench/';
  } catch {
    // not a git checkout: leave it unknown
  }
  return [
    `date:    ${new Date().toISOString()}`,
    `node:    ${process.version} (V8 ${process.versions.v8}), ${os.platform()} ${os.arch()}`,
    `cpu:     ${model} × ${cpus.length}, ${(os.totalmem() / 1024 ** 3).toFixed(1)} GiB RAM, load ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
    `commit:  ${commit}`,
  ];
}

async function runSuite(spec: SuiteSpec): Promise<Outcome> {
  const file = path.join(__dirname, spec.file);
  if (!existsSync(file)) {
    if (spec.optional) return { spec, status: 'skipped', note: `bench/${spec.file} does not exist yet` };
    return { spec, status: 'failed', note: `bench/${spec.file} is missing` };
  }
  try {
    const result = await runInChild<SuiteResult | null>(path.join(__dirname, 'suiteChild.ts'), [file], ['--expose-gc']);
    if (result === null)
      return { spec, status: 'ran', note: 'figures printed above; no targets reported to the runner' };
    printSuite(result);
    return { spec, status: 'ran', result };
  } catch (error) {
    console.error(error instanceof Error ? error.message : error);
    return { spec, status: 'failed', note: error instanceof Error ? error.message.split('\n')[0] : String(error) };
  }
}

/** Every target as a line: PASS, MISS or UNSETTLED, what, the figure with its spread, the goal. */
function targetLines(outcomes: readonly Outcome[]): string[] {
  const lines: string[] = [];
  for (const o of outcomes) {
    if (o.result !== undefined)
      for (const t of o.result.targets) lines.push(`${verdict(t)}  ${t.name}: ${t.measured} (target ${t.goal})`);
    else
      lines.push(
        `${o.status === 'failed' ? 'FAILED' : o.status === 'skipped' ? 'SKIPPED' : 'RAN'}  ${o.spec.name}: ${o.note ?? ''}`,
      );
  }
  return lines;
}

/** docs/benchmarks.md's generated block: the machine, then each suite's table, then the target lines. */
function readmeBlock(outcomes: readonly Outcome[], info: readonly string[]): string {
  const out: string[] = ['```', ...info, '```', ''];
  for (const o of outcomes) {
    if (o.result === undefined) continue;
    out.push(
      `**${o.spec.title}**`,
      '',
      `| | ${o.result.columns.join(' | ')} |`,
      `|---|${o.result.columns.map(() => '---:').join('|')}|`,
    );
    for (const r of o.result.rows) out.push(`| ${r.label} | ${r.cells.join(' | ')} |`);
    out.push('');
  }
  out.push('```', ...targetLines(outcomes), '```');
  return out.join('\n');
}

const BEGIN = '<!-- bench:begin (generated by npm run bench -- --write-docs) -->';
const END = '<!-- bench:end -->';

function writeReadme(block: string): void {
  const file = path.join(ROOT, 'docs', 'benchmarks.md');
  const text = readFileSync(file, 'utf8');
  const a = text.indexOf(BEGIN);
  const b = text.indexOf(END);
  if (a === -1 || b < a) throw new Error(`docs/benchmarks.md has no ${BEGIN} … ${END} block to write into`);
  writeFileSync(file, `${text.slice(0, a + BEGIN.length)}\n${block}\n${text.slice(b)}`);
  console.log('\ndocs/benchmarks.md: benchmark block written');
}

function printSummary(outcomes: readonly Outcome[], info: readonly string[], markdown: boolean): void {
  console.log('\n══ Summary ══');
  for (const line of info) console.log(line);
  const transition = outcomes.find((o) => o.spec.name === 'transition')?.result;
  if (transition !== undefined) {
    console.log('');
    console.log(
      formatTable(
        ['per move (median)', ...transition.columns.slice(0, 2)],
        transition.rows.map((r) => [r.label, ...r.cells.slice(0, 2)]),
      ),
    );
  }
  const rows: string[][] = [];
  for (const o of outcomes) {
    if (o.result !== undefined) {
      for (const t of o.result.targets) rows.push([t.name, t.goal, t.measured, verdict(t)]);
    } else {
      rows.push([
        `${o.spec.name}: ${o.note ?? ''}`,
        '',
        '',
        o.status === 'failed' ? 'FAILED' : o.status === 'skipped' ? 'skipped' : 'ran',
      ]);
    }
  }
  console.log('');
  console.log(formatTable(['target', 'goal', 'measured', 'result'], rows));
  console.log('');
  for (const line of targetLines(outcomes)) console.log(line);
  if (markdown) {
    console.log('\nMarkdown:\n');
    if (transition !== undefined) {
      console.log('| per move (median) | ns/move | × floor |\n|---|---:|---:|');
      for (const r of transition.rows) console.log(`| ${r.label} | ${r.cells[0] ?? ''} | ${r.cells[1] ?? ''} |`);
      console.log('');
    }
    console.log('| target | goal | measured | result |\n|---|---|---:|---|');
    for (const r of rows) console.log(`| ${r.join(' | ')} |`);
  }
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const markdown = args.includes('--markdown');
  const fromSource = args.includes('--source');
  const names = args.filter((a) => !a.startsWith('--'));
  const unknown = names.filter((n) => !SUITES.some((s) => s.name === n));
  if (unknown.length > 0)
    throw new Error(`unknown suite ${unknown.join(', ')}; the suites are ${SUITES.map((s) => s.name).join(', ')}`);
  const selected = names.length === 0 ? SUITES : SUITES.filter((s) => names.includes(s.name));
  const quick = args.includes('--quick');
  if (args.includes('--write-docs') && (names.length > 0 || quick))
    throw new Error('--write-docs writes the figures of a full run: run it without naming suites or --quick');
  const known = ['--quick', '--markdown', '--source', '--write-docs'];
  const badFlag = args.find((a) => a.startsWith('--') && !known.includes(a));
  if (badFlag !== undefined) throw new Error(`unknown option ${badFlag}; the options are ${known.join(', ')}`);
  // Read by every suite (bench/harness.ts QUICK); children inherit the environment.
  if (quick) process.env.BENCH_QUICK = '1';
  else delete process.env.BENCH_QUICK;
  const started = performance.now();

  // The library must run at its default log level; children get an environment without it too.
  delete process.env.AGENT_SM_LOG_LEVEL;
  if (fromSource) delete process.env.BENCH_LIB;
  else if (process.env.BENCH_LIB === undefined || process.env.BENCH_LIB === '')
    process.env.BENCH_LIB = await buildLibrary();
  const atStart = speedProbe();
  const machine = machineInfo();
  const info = [
    ...machine,
    speedLine(atStart),
    `library: ${describeLibrary()}`,
    ...(quick ? ['run:     --quick (short samples: indicative, not the reference)'] : []),
  ];
  console.log('agent-state-machine benchmarks');
  for (const line of info) console.log(line);

  const outcomes: Outcome[] = [];
  for (const spec of selected) {
    console.log(`\n── ${spec.title} ──`);
    const outcome = await runSuite(spec);
    if (outcome.status === 'skipped') console.log(`  skipped: ${outcome.note}`);
    outcomes.push(outcome);
  }
  // The machine's speed again, once every suite ran: a run whose speed moved says so.
  info[machine.length] = speedLine(atStart, speedProbe());
  printSummary(outcomes, info, markdown);
  console.log(`\nbench: ${((performance.now() - started) / 1000).toFixed(0)} s in all`);
  if (args.includes('--write-docs')) writeReadme(readmeBlock(outcomes, info));
  if (outcomes.some((o) => o.status === 'failed')) process.exitCode = 1;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
