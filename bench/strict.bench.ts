// What a strict cap and the money ledger cost, and what strictness leaves unspent.
//  - Overhead per LLM call: one adapter, turns of 4 LLM calls (3 tool rounds) with an agent
//    that takes no time (its LLM and tools resolve at once) and bounds its requests; a
//    `maxCostUsd` cap that is never reached, plain (`strict: false`) vs strict. Samples alternate in one
//    process; the figure is the ratio of the medians, strict / plain, per call.
//  - Unspent share: random batches (seeded) of agents whose calls use a random share of their
//    bound, concurrency 8, under a strict total cap: the share of the cap left when the batch
//    ends; and, beside it, how far the same batches pass a plain cap.
//  - Near the cap: latency-bound agents (each LLM call waits 5 ms), concurrency 16, a cap that
//    runs out part-way: LLM calls per second, strict / plain, and how many calls each made.
//  - The ledger's fsync per LLM call: turns with `ledger: true` minus turns without it (same
//    sink, durability 'none', so the reserve line's fsync is the difference), against its
//    floor in place: turns without it whose agent, before each LLM call, appends a line of
//    the same size to the same file with a bare write + fsync, minus turns without it. An
//    fsync's cost depends on what waits in the file (the turn's other lines since the last
//    one); in a loop of nothing else it waits for one line, and the ledger's measured 1.3-1.6x
//    the loop's, as much as the same fsync in place. That loop is timed too, for reference.
//
//   npm run bench -- strict          through the runner
//   npx tsx bench/strict.bench.ts    alone
//   BENCH_QUICK=1 (npm run bench -- --quick): fewer samples and batches
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { AgentLoop, LLMResponse, OperationContext, Pricing } from '../lib/index';
import {
  failed,
  formatNs,
  formatRatio,
  median,
  printSuite,
  quantile,
  ratioFigure,
  ratioTarget,
  formatRatioFigure,
  scaled,
  type RatioFigure,
  type SuiteResult,
} from './harness';
import { loadLibrary } from './library';
// From their own files: the main entry's exports are being split into subpaths.
import { WRAP_UP_EXTENSION } from '../lib/agent/extensionStates';
import { extendTable } from '../lib/machine/extendTable';
import { DEFAULT_TABLE } from '../lib/machine/transitions';

const lib = loadLibrary();
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? scaled(15, 5));
/** Random batches of the unspent-share figure, and ledger samples: fewer under `--quick`. */
const BATCHES = scaled(20, 6);
const LEDGER_SAMPLES = scaled(7, 3);
const pricing: Pricing = (u) => (u.inputTokens ?? 0) * 1e-6 + (u.outputTokens ?? 0) * 4e-6;
const BOUND = { inputTokens: 2000, maxOutputTokens: 1000, model: 'm' };

/**
 * An agent that answers at once: `rounds` tool rounds, then text; each response uses `share` of
 * its bound. It honours a final call (`ctx.wrapUp`, under `wrapUp`): that one answers with text.
 */
export function instantAgent(rounds: number, share = () => 0.5, latencyMs = 0): AgentLoop {
  let n = 0;
  // A lowered max output tokens (ctx.maxOutputTokens) is honoured, as a provider stops there.
  const reply = async (...args: unknown[]): Promise<LLMResponse> => {
    const ctx = args.at(-1) as OperationContext;
    if (latencyMs > 0) await new Promise((r) => setTimeout(r, latencyMs));
    const s = share();
    const max = Math.min(BOUND.maxOutputTokens, ctx.maxOutputTokens ?? Infinity);
    const usage = { inputTokens: Math.floor(BOUND.inputTokens * s), outputTokens: Math.floor(max * s) };
    n += 1;
    return n % (rounds + 1) === 0 || ctx.wrapUp !== undefined
      ? { text: 'done', usage, model: 'm' }
      : { toolCalls: [{ id: `c${n}`, name: 'bash' }], usage, model: 'm' };
  };
  return {
    sendUserMessage: reply,
    sendToolResults: reply,
    runTool: async (call) => ({ callId: call.id, output: 'ok' }),
    llmCallBound: () => ({ ...BOUND }),
    honours: { wrapUp: true },
  };
}

/** ns per LLM call of `turns` turns on one adapter. */
async function perCall(adapter: InstanceType<typeof lib.AgentWithStateMachine>, turns: number): Promise<number> {
  const start = process.hrtime.bigint();
  let calls = 0;
  for (let i = 0; i < turns; i++) calls += (await adapter.runTurn('go')).usage.llmCalls;
  return Number(process.hrtime.bigint() - start) / calls;
}

async function overhead(): Promise<{ plain: number; strict: number; ratio: RatioFigure }> {
  const make = (strict: boolean) =>
    new lib.AgentWithStateMachine(instantAgent(3), {
      logger: false,
      pricing,
      budget: { maxCostUsd: 1e6, strict },
    });
  const plainAgent = make(false);
  const strictAgent = make(true);
  await perCall(plainAgent, scaled(2000, 500));
  await perCall(strictAgent, scaled(2000, 500));
  const plain: number[] = [];
  const strict: number[] = [];
  for (let s = 0; s < SAMPLES; s++) {
    plain.push(await perCall(plainAgent, scaled(1000, 400)));
    strict.push(await perCall(strictAgent, scaled(1000, 400)));
  }
  return {
    plain: median(plain),
    strict: median(strict),
    ratio: ratioFigure(strict.map((x, i) => x / plain[i]!)),
  };
}

/** A seeded random source (mulberry32). */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

async function unspent(): Promise<{ strictLeft: number[]; plainOver: number[]; wrapLeft: number[]; wrapped: number }> {
  const strictLeft: number[] = [];
  const plainOver: number[] = [];
  const wrapLeft: number[] = [];
  let wrapped = 0;
  for (let seed = 1; seed <= BATCHES; seed++) {
    const cap = 0.05 + seeded(seed * 7)() * 0.2;
    const w = await wrappedBatch(seed, cap);
    wrapLeft.push(w.left);
    wrapped += w.wrapped;
    for (const strict of [true, false]) {
      const report = await lib.runBatch(randomTasks(seed), {
        concurrency: 8,
        pricing,
        logger: false,
        total: { maxCostUsd: cap, strict },
      });
      if (strict) strictLeft.push((cap - report.totals.costUsd) / cap);
      else plainOver.push(report.totals.costUsd / cap);
    }
  }
  return { strictLeft, plainOver, wrapLeft, wrapped };
}

const WRAP_UP_TABLE = extendTable(DEFAULT_TABLE, WRAP_UP_EXTENSION);

/** The agents of batch `seed` (60 tasks of 1-4 tool rounds each, random shares of their bound). */
function randomTasks(seed: number): { id: string; input: string; agent: () => AgentLoop }[] {
  const random = seeded(seed);
  return Array.from({ length: 60 }, (_, i) => ({
    id: `t${i}`,
    input: 'go',
    agent: () => instantAgent(1 + Math.floor(random() * 4), random),
  }));
}

/**
 * Batch `seed` under a strict total cap with `wrapUp`: each run keeps its final call's worst
 * case held, and ends with an answer when its next ordinary call would not fit beside it.
 * Returns the share of the cap left at batch end and how many runs ended wrapped up.
 */
async function wrappedBatch(seed: number, cap: number): Promise<{ left: number; wrapped: number }> {
  const report = await lib.runBatch(randomTasks(seed), {
    concurrency: 8,
    pricing,
    logger: false,
    table: WRAP_UP_TABLE,
    total: { maxCostUsd: cap, strict: true, wrapUp: true },
  });
  return { left: (cap - report.totals.costUsd) / cap, wrapped: report.totals.outcomes.wrapped_up ?? 0 };
}

async function nearCap(strict: boolean): Promise<{ callsPerSecond: number; calls: number; spentShare: number }> {
  const cap = 0.5;
  const tasks = Array.from({ length: 120 }, (_, i) => ({
    id: `t${i}`,
    input: 'go',
    agent: () => instantAgent(3, () => 0.5, 5),
  }));
  const start = performance.now();
  const report = await lib.runBatch(tasks, {
    concurrency: 16,
    pricing,
    logger: false,
    total: { maxCostUsd: cap, strict },
  });
  const seconds = (performance.now() - start) / 1000;
  return {
    callsPerSecond: report.totals.llmCalls / seconds,
    calls: report.totals.llmCalls,
    spentShare: report.totals.costUsd / cap,
  };
}

/** `agent`, writing `line` to `fd` and fsyncing it before each of its LLM calls. */
function reservingBare(agent: AgentLoop, fd: number, line: string): AgentLoop {
  const before =
    <A extends unknown[], R>(call: (...args: A) => Promise<R>) =>
    (...args: A): Promise<R> => {
      fs.writeSync(fd, line);
      fs.fsyncSync(fd);
      return call(...args);
    };
  return {
    ...agent,
    sendUserMessage: before(agent.sendUserMessage.bind(agent)),
    sendToolResults: before(agent.sendToolResults.bind(agent)),
  };
}

async function ledger(
  dir: string,
): Promise<{ perCallNs: number; floorNs: number; bareNs: number; ratio: RatioFigure; loopRatio: RatioFigure }> {
  const turns = 100;
  const line = `${JSON.stringify({ type: 'reserve', seq: 10, turn: 1, operation: 'sendToolResults', attempt: 1, at: Date.now(), maxCostUsd: 0.006, bound: BOUND })}\n`;
  // 'floor': no ledger, and before each LLM call the bare write + fsync of a reserve line
  // appended to the same file, where the ledger's would go.
  const run = async (kind: 'on' | 'off' | 'floor', i: number): Promise<number> => {
    const file = path.join(dir, `l-${kind}-${i}.jsonl`);
    const sink = lib.JsonlHistorySink.open(file, { runId: 'b', durability: 'none' });
    const fd = kind === 'floor' ? fs.openSync(file, 'a') : undefined;
    const agent = fd === undefined ? instantAgent(3) : reservingBare(instantAgent(3), fd, line);
    const adapter = new lib.AgentWithStateMachine(agent, { logger: false, pricing, sink, ledger: kind === 'on' });
    const ns = await perCall(adapter, turns);
    sink.close();
    if (fd !== undefined) fs.closeSync(fd);
    return ns;
  };
  // For reference: the same write + fsync in a loop of nothing else, to a file of its own.
  const bare = (i: number): number => {
    const fd = fs.openSync(path.join(dir, `bare-${i}.jsonl`), 'a');
    const n = 400;
    const start = process.hrtime.bigint();
    for (let k = 0; k < n; k++) {
      fs.writeSync(fd, line);
      fs.fsyncSync(fd);
    }
    const ns = Number(process.hrtime.bigint() - start) / n;
    fs.closeSync(fd);
    return ns;
  };
  const kinds = ['on', 'off', 'floor'] as const;
  for (const kind of kinds) await run(kind, -1);
  const diffs: number[] = [];
  const floors: number[] = [];
  const bares: number[] = [];
  for (let s = 0; s < LEDGER_SAMPLES; s++) {
    const ns: Record<(typeof kinds)[number], number> = { on: 0, off: 0, floor: 0 };
    // The order rotates, so that no kind always follows another's fsyncs.
    for (let j = 0; j < kinds.length; j++) {
      const kind = kinds[(j + s) % kinds.length]!;
      ns[kind] = await run(kind, s);
    }
    diffs.push(ns.on - ns.off);
    floors.push(ns.floor - ns.off);
    bares.push(bare(s));
  }
  return {
    perCallNs: median(diffs),
    floorNs: median(floors),
    bareNs: median(bares),
    ratio: ratioFigure(diffs.map((d, i) => d / floors[i]!)),
    loopRatio: ratioFigure(diffs.map((d, i) => d / bares[i]!)),
  };
}

export async function run(): Promise<SuiteResult> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-strict-'));
  try {
    const o = await overhead();
    const u = await unspent();
    const strictNear = await nearCap(true);
    const plainNear = await nearCap(false);
    const l = await ledger(dir);
    const pct = (x: number): string => `${(x * 100).toFixed(1)}%`;
    const spread = (xs: number[], f: (x: number) => string): string => `${f(Math.min(...xs))} – ${f(Math.max(...xs))}`;
    const rows = [
      {
        label: 'per LLM call, zero-latency agent: plain maxCostUsd',
        cells: [formatNs(o.plain), ''],
      },
      { label: 'per LLM call: strict maxCostUsd', cells: [formatNs(o.strict), formatRatio(o.strict / o.plain)] },
      {
        label: `unspent share of a strict cap at batch end (${BATCHES} random batches)`,
        cells: [pct(median(u.strictLeft)), spread(u.strictLeft, pct)],
      },
      {
        label: `the same batches, strict cap with wrapUp: unspent share at batch end (${u.wrapped} runs wrapped up)`,
        cells: [
          pct(median(u.wrapLeft)),
          `${spread(u.wrapLeft, pct)} (p25–p75 ${pct(quantile(u.wrapLeft, 0.25))} – ${pct(quantile(u.wrapLeft, 0.75))})`,
        ],
      },
      {
        label: 'the same batches under a plain cap: spend / cap',
        cells: [pct(median(u.plainOver)), spread(u.plainOver, pct)],
      },
      {
        label: `near the cap, 5 ms calls, concurrency 16: plain (${plainNear.calls} calls, ${pct(plainNear.spentShare)} of cap)`,
        cells: [`${Math.round(plainNear.callsPerSecond)} calls/s`, ''],
      },
      {
        label: `near the cap: strict (${strictNear.calls} calls, ${pct(strictNear.spentShare)} of cap)`,
        cells: [
          `${Math.round(strictNear.callsPerSecond)} calls/s`,
          formatRatio(strictNear.callsPerSecond / plainNear.callsPerSecond),
        ],
      },
      { label: 'ledger: added per LLM call (reserve line + fsync)', cells: [formatNs(l.perCallNs), ''] },
      {
        label: 'floor in place: a bare write + fsync of the line before each call, same file',
        cells: [formatNs(l.floorNs), formatRatioFigure(l.ratio)],
      },
      {
        label: 'for reference: the same write + fsync in a loop of its own',
        cells: [formatNs(l.bareNs), formatRatioFigure(l.loopRatio)],
      },
    ];
    return {
      suite: 'strict',
      columns: ['median', 'ratio / spread'],
      rows,
      targets: [
        // Every strict attempt ends through the one charge rule (chargeAttempt): a priced
        // response pays its price, one whose cost stays unknown pays its whole hold.
        ratioTarget('strict cap (charge-on-uncertainty) vs plain cap, per LLM call', o.ratio, 1.15, 'plain cap'),
        {
          name: 'strict spend never passes its cap',
          goal: '≥ 0% left',
          measured: pct(Math.min(...u.strictLeft)),
          pass: Math.min(...u.strictLeft) >= 0,
        },
        {
          name: `strict cap with wrapUp never passes its cap (${BATCHES} random batches)`,
          goal: '≥ 0% left',
          measured: `${pct(Math.min(...u.wrapLeft))} least left; median ${pct(median(u.wrapLeft))} unspent`,
          pass: Math.min(...u.wrapLeft) >= 0,
        },
        ratioTarget(
          'ledger per LLM call vs bare write + fsync',
          l.ratio,
          1.5,
          'bare write + fsync of the line before each call, in place',
        ),
      ],
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (require.main === module) run().then(printSuite, failed);
