// The framework mirrors with the money ledger on, per step, against the loop alone: the AI SDK
// (`mirrorAISDK` on `generateText`), LangGraph (`LangGraphMirror` on a prebuilt ReAct agent,
// observing the model and tools it wrapped; observing the graph's callbacks, for reference)
// and the OpenAI Agents SDK (`agentsMirror().run`), each on a mock model that answers at once
// (bench/frameworkLoops.ts: a tool call, then text; 2 steps a run).
//
// The ledger forces a reserve line to the disk before each model call: an fsync, which costs
// more than a whole zero-latency step, and which forces the history lines written since the
// last one too (they share the file). So the target is on the mirrored loop ÷ the loop alone
// whose model makes those writes and that fsync itself (bare writes, a line each, of as many
// lines and bytes as the mirror's file gains per call, to a file in the same temp folder, then
// an fsync, before each call): what the mirror
// adds beside what the ledger's promise costs any writer of that file. The ratio to the loop
// with no fsync at all is printed beside it, and so is where the difference lies: the same
// mirror with the ledger off, its model forcing the mirror's history file to the disk before
// each call, against the floor (the floor + the mirror's own work) and under the mirror with
// the ledger (what the ledger adds beyond an fsync of the same file).
//
// One fresh process per framework and round; in it, bare, floor, mirrored and ledger-off
// samples (each a batch of runs) alternate, the order rotating; the figures are medians of
// per-sample ratios, pooled over rounds, with quartiles. Target: ≤ 1.5×. The Agents SDK needs Node 22 or later:
// when the runner's Node is older, its process runs on a Node 26 the bench installs once into
// .bench-tmp/node26 (bench/nodeForAgentsSdk.ts); if that fails, its target is a MISS saying why.
//
//   npm run bench -- mirrorledger                 through the runner
//   npx tsx bench/mirrorLedger.bench.ts           alone
import { mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { FsyncBeforeCall, frameworkLoop, type FrameworkLoop, type FrameworkName } from './frameworkLoops';
import { nodeForAgentsSdk } from './nodeForAgentsSdk';
import {
  failed,
  formatNs,
  formatRatioFigure,
  median,
  printSuite,
  ratioFigure,
  ratioTarget,
  runInChild,
  scaled,
  serveChild,
  type ResultRow,
  type SuiteResult,
  type TargetCheck,
} from './harness';

const TARGET = 1.5;
const STEPS = 2;
const RUNS_PER_SAMPLE = 10;
const SAMPLES = scaled(41, 15);
const WARMUP_RUNS = scaled(600, 150);
const FRAMEWORKS: readonly FrameworkName[] = ['ai-sdk', 'langgraph', 'langgraph-graph', 'openai-agents'];
/**
 * Printed beside the targets, with none of their own: the LangGraph mirror observing `'graph'`
 * (its default) pays for LangChain's callbacks on every node of every step, a cost any handler on
 * the graph meets; the target is on the mode that observes what it wrapped.
 */
const REFERENCE: ReadonlySet<FrameworkName> = new Set(['langgraph-graph']);

export interface FrameworkSamples {
  readonly label: string;
  readonly perCall: { bytes: number; lines: number };
  /** ns per step of each sample. */
  readonly bare: number[];
  readonly floor: number[];
  readonly mirrored: number[];
  /** The mirror with the ledger off, its model forcing the mirror's history file to the disk. */
  readonly unledgered: number[];
}

/** The kinds of samples, in the order a round starts rotating from. */
const KINDS = ['bare', 'floor', 'mirrored', 'unledgered'] as const;
type Kind = (typeof KINDS)[number];

async function timed(run: () => Promise<void>): Promise<number> {
  const start = process.hrtime.bigint();
  for (let i = 0; i < RUNS_PER_SAMPLE; i++) await run();
  return Number(process.hrtime.bigint() - start) / (RUNS_PER_SAMPLE * STEPS);
}

export async function measure(name: FrameworkName): Promise<FrameworkSamples> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'agent-sm-mirror-ledger-'));
  const fsync = new FsyncBeforeCall(path.join(dir, 'floor.jsonl'));
  let loop: FrameworkLoop | undefined;
  try {
    loop = await frameworkLoop(name, dir, fsync);
    await loop.mirrored();
    const perCall = fsync.sizeAs(loop.historyFile);
    for (let i = 0; i < WARMUP_RUNS; i += RUNS_PER_SAMPLE) for (const k of KINDS) await timed(loop[k]);
    const out = {
      label: loop.label,
      perCall,
      bare: [] as number[],
      floor: [] as number[],
      mirrored: [] as number[],
      unledgered: [] as number[],
    };
    for (let s = 0; s < SAMPLES; s++) {
      for (let j = 0; j < KINDS.length; j++) {
        const k = KINDS[(j + s) % KINDS.length]!;
        out[k].push(await timed(loop[k]));
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
    const runs = 1 + Math.ceil(WARMUP_RUNS / RUNS_PER_SAMPLE) * RUNS_PER_SAMPLE + SAMPLES * RUNS_PER_SAMPLE;
    if (loop.mirroredCalls() !== runs * STEPS)
      throw new Error(`${name}: the mirror charged ${loop.mirroredCalls()} model calls, expected ${runs * STEPS}`);
    // The run that sized the floor was the ledger's mirror's alone.
    if (loop.unledgeredCalls() !== (runs - 1) * STEPS)
      throw new Error(
        `${name}: the mirror with the ledger off charged ${loop.unledgeredCalls()} model calls, expected ${(runs - 1) * STEPS}`,
      );
    return out;
  } finally {
    loop?.close();
    fsync.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function run(rounds = Number(process.env.BENCH_ROUNDS ?? scaled(3, 1))): Promise<SuiteResult> {
  const rows: ResultRow[] = [];
  const targets: TargetCheck[] = [];
  for (const name of FRAMEWORKS) {
    const goal = `≤ ${TARGET.toFixed(2)}× the loop alone + a bare write + fsync of the reserve line before each model call`;
    const node = name === 'openai-agents' ? nodeForAgentsSdk() : { path: process.execPath };
    if ('missing' in node) {
      targets.push({
        name: `${name} mirror with the ledger, per step`,
        goal,
        measured: `not measured: ${node.missing}`,
        pass: false,
      });
      continue;
    }
    const all: FrameworkSamples[] = [];
    for (let r = 0; r < rounds; r++)
      all.push(await runInChild<FrameworkSamples>(__filename, ['--measure', name], [], node.path));
    const pool = (k: Kind): number[] => all.flatMap((s) => s[k]);
    const bare = pool('bare');
    const floor = pool('floor');
    const mirrored = pool('mirrored');
    const unledgered = pool('unledgered');
    const toFloor = ratioFigure(mirrored.map((x, i) => x / floor[i]!));
    const toBare = ratioFigure(mirrored.map((x, i) => x / bare[i]!));
    const ownWork = ratioFigure(unledgered.map((x, i) => x / floor[i]!));
    const ledgerAdds = ratioFigure(mirrored.map((x, i) => x / unledgered[i]!));
    const label = all[0]!.label;
    const where =
      name === 'openai-agents' && node.path !== process.execPath
        ? `, Node ${path.basename(path.dirname(path.dirname(node.path)))}`
        : '';
    rows.push(
      { label: `${label}: the loop alone`, cells: [formatNs(median(bare)), ''] },
      {
        label: `${label}: floor, + ${all[0]!.perCall.lines} writes (${all[0]!.perCall.bytes} bytes, the file's gain per call) + fsync before each model call`,
        cells: [formatNs(median(floor)), ''],
      },
      {
        label: `${label}: mirrored, ledger on${where}`,
        cells: [formatNs(median(mirrored)), formatRatioFigure(toFloor)],
      },
      {
        label: `${label}: mirrored ÷ the loop alone, no fsync (for reference)`,
        cells: ['', formatRatioFigure(toBare)],
      },
      {
        label: `${label}: the mirror with the ledger off, its model forcing the mirror's file before each call (÷ floor: the floor + the mirror's own work)`,
        cells: [formatNs(median(unledgered)), formatRatioFigure(ownWork)],
      },
      {
        label: `${label}: mirrored ÷ that (what the ledger adds beyond an fsync of the same file)`,
        cells: ['', formatRatioFigure(ledgerAdds)],
      },
    );
    if (!REFERENCE.has(name))
      targets.push(
        ratioTarget(
          `${name} mirror with the ledger, per step`,
          toFloor,
          TARGET,
          "the loop alone + the ledger's write + fsync, in place",
        ),
      );
    console.log(
      `  ${name}: mirrored ÷ floor ${formatRatioFigure(toFloor)}; ÷ the loop alone ${formatRatioFigure(toBare)}; ledger off + its fsync ÷ floor ${formatRatioFigure(ownWork)}; mirrored ÷ ledger off + its fsync ${formatRatioFigure(ledgerAdds)}`,
    );
  }
  return { suite: 'mirrorledger', columns: ['per step', '× floor'], rows, targets };
}

if (require.main === module) {
  const i = process.argv.indexOf('--measure');
  if (i !== -1) serveChild(() => measure(process.argv[i + 1] as FrameworkName));
  else run().then(printSuite, failed);
}
