// The turn core against this round's start: the adapter's turn and the mirror's step, on the
// library as it was when the round began (bench/roundStart.ts: ROUND_START) and as it is now,
// both bundled the same way and loaded in the same process, timed side by side.
//
//  - adapter turn: `new AgentWithStateMachine(agent, { budget: { maxCostUsd: 1e9, strict: false } })`
//    (default logger, history 100, a budget so every check runs), `runTurn` again and again on a
//    zero-latency agent: one tool call, then text (12 moves). Each bundle drives its own agent object.
//  - mirror step: `generateText` over the AI SDK's mock model with `...mirrorAISDK(...).settings`
//    (bench/aiSdkMock.ts: a tool call, then text), one mirror per bundle for all runs.
//
// Samples of old and new alternate, the order swapping each pair; the figure is the median of
// per-pair ratios of CPU time (new ÷ old), pooled over fresh processes, with quartiles. Target
// ≤ 1.05×. CPU time decides when the quartiles are clear of it; otherwise callgrind's
// instructions per unit do (bench/turnCoreInstructions.ts), so that one commit gets one verdict.
//
//   npm run bench -- turncore                 through the runner
//   BENCH_TURNCORE_BASE=<commit> npm run bench -- turncore
//                                             against another commit than the round start
//   npx tsx bench/turnCore.bench.ts           alone
import { STEPS_PER_RUN } from './aiSdkMock';
import {
  failed,
  formatNs,
  median,
  printSuite,
  ratioFigure,
  runInChild,
  scaled,
  serveChild,
  type RatioFigure,
  type SuiteResult,
  type TargetCheck,
} from './harness';
import { buildTurnCores, loadTurnCore, turnCoreBase, type TurnCoreBase } from './roundStart';
import { buildTurnCoreChild, turnCoreInstructions } from './turnCoreInstructions';
import { side, type Side, type TurnCoreKey } from './turnCoreSides';
import { cpuOrInstructions, once } from './verdict';

const TARGET = 1.05;
const SAMPLES = scaled(101, 31);
const ADAPTER_TURNS = 100;
// A mirrored run allocates far more than an adapter turn (the AI SDK's messages and promises):
// samples of 20 runs caught a garbage collection or not, and their ratios spread 0.6×–1.8×. A
// sample of 100 runs holds several.
const MIRROR_RUNS = 100;
// As long in --quick as in a full run: a shorter warm-up times code the JIT has not finished with.
const WARMUP = 3000;

/**
 * CPU time per call in ns, not wall time: the work never waits, so the two are the same on an
 * idle machine, but time the process spends preempted by the machine's other work moved the
 * verdict between runs of one commit (1.02× and 1.06×); CPU time it does not.
 */
async function timed(work: () => Promise<unknown>, n: number): Promise<number> {
  const start = process.cpuUsage();
  for (let i = 0; i < n; i++) await work();
  const used = process.cpuUsage(start);
  return ((used.user + used.system) * 1000) / n;
}

/** One process's samples: ns per adapter turn and per mirror step, old and new. */
export interface CoreSamples {
  readonly adapter: { old: number[]; now: number[] };
  readonly mirror: { old: number[]; now: number[] };
}

export async function measure(oldFile: string, newFile: string): Promise<CoreSamples> {
  const sides = { old: side(loadTurnCore(oldFile)), now: side(loadTurnCore(newFile)) };
  const out: CoreSamples = { adapter: { old: [], now: [] }, mirror: { old: [], now: [] } };
  const kinds = [
    { key: 'adapter', n: ADAPTER_TURNS, per: 1, run: (s: Side) => s.adapterTurn },
    { key: 'mirror', n: MIRROR_RUNS, per: STEPS_PER_RUN, run: (s: Side) => s.mirrorRun },
  ] as const;
  for (const k of kinds) {
    for (let i = 0; i < WARMUP; i += k.n) {
      await timed(k.run(sides.old), k.n);
      await timed(k.run(sides.now), k.n);
    }
    for (let s = 0; s < SAMPLES; s++) {
      const order = s % 2 === 0 ? (['old', 'now'] as const) : (['now', 'old'] as const);
      for (const which of order) out[k.key][which].push((await timed(k.run(sides[which]), k.n)) / k.per);
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
  return out;
}

const WHAT: Record<TurnCoreKey, string> = {
  adapter: 'adapter turn (tool-use turn, 12 moves)',
  mirror: 'mirror step (mirrorAISDK, mock model)',
};

/** One unit's target: CPU time when its spread is clear of it, else instructions per unit. */
function decide(
  key: TurnCoreKey,
  cpu: RatioFigure,
  built: () => Promise<{ old: string; now: string }>,
  { label: goal, short: base }: TurnCoreBase,
): Promise<TargetCheck> {
  return cpuOrInstructions({ name: `${WHAT[key]}, now vs ${base}`, goal, limit: TARGET }, cpu, async () => {
    const { old, now } = await turnCoreInstructions(key, await built());
    const unit = key === 'adapter' ? 'turn' : 'step';
    return { ratio: now / old, detail: `instructions/${unit} (now ${now.toFixed(0)}, ${base} ${old.toFixed(0)})` };
  });
}

export async function run(rounds = Number(process.env.BENCH_ROUNDS ?? scaled(3, 1))): Promise<SuiteResult> {
  const base = turnCoreBase();
  const files = await buildTurnCores(base.commit);
  const all: CoreSamples[] = [];
  for (let r = 0; r < rounds; r++) {
    const s = await runInChild<CoreSamples>(__filename, ['--measure', files.old, files.now]);
    all.push(s);
    const ratio = (x: { old: number[]; now: number[] }): string =>
      `${median(x.now.map((v, i) => v / x.old[i]!)).toFixed(2)}×`;
    console.log(
      `  round ${r + 1}/${rounds}: adapter turn ${ratio(s.adapter)}, mirror step ${ratio(s.mirror)} (new ÷ old)`,
    );
  }
  const rows = [];
  const figures = {} as Record<TurnCoreKey, RatioFigure>;
  for (const key of ['adapter', 'mirror'] as const) {
    const old = all.flatMap((s) => s[key].old);
    const now = all.flatMap((s) => s[key].now);
    figures[key] = ratioFigure(now.map((v, i) => v / old[i]!));
    rows.push(
      { label: `${WHAT[key]}, ${base.label}`, cells: [formatNs(median(old)), ''] },
      { label: `${WHAT[key]}, now`, cells: [formatNs(median(now)), `${figures[key].median.toFixed(2)}×`] },
    );
  }
  const built = once(async () => (await buildTurnCoreChild(), files));
  const targets = [
    await decide('adapter', figures.adapter, built, base),
    await decide('mirror', figures.mirror, built, base),
  ];
  return { suite: 'turncore', columns: ['median', `now ÷ ${base.short}`], rows, targets };
}

if (require.main === module) {
  const i = process.argv.indexOf('--measure');
  if (i !== -1) serveChild(() => measure(process.argv[i + 1]!, process.argv[i + 2]!));
  else run().then(printSuite, failed);
}
