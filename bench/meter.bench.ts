// The metered fetch (`meteredFetch` of agent-state-machine/openai, inside `observeLoop`) against a
// passthrough `fetch` on the same answer from the same local server, with the real `openai`
// client reading it, both inside an observed run (bench/meterSides.ts): a streamed answer of
// 2,000 chunks (read beside the SDK through a fold, cut-watch included) and a JSON answer of
// the same text.
//
// Target: the metering path costs at most 1.10× the passthrough. The passthrough's loop tells
// the run's mirror of its call by hand, as a loop without the meter would: both sides do the
// same money work (gate, hold, charge, the run's moves), and the ratio is the metering's alone
// (reading the request's body, reading the answer beside the SDK, handing it on). The whole
// observed call against a run that makes no model call is shown beside it, without a target:
// that includes the money core, which `turncore` and `mirror` measure against their own floors.
//
// CPU time per pair of samples timed back to back (the order alternating, the first pairs a
// warm-up left out), a sample ~400 ms of CPU on each side. Its spread is wide (p25–p75 up to
// 0.92×–1.30× for JSON), and two full runs of one commit read the stream at 1.05× and 1.15×: so,
// as the transition suite does, CPU time decides only when its p25–p75 is clear of the target,
// and callgrind's instruction counts decide otherwise (bench/meterInstructions.ts, ~3 minutes).
//
//   npm run bench -- meter                 through the runner
//   npx tsx bench/meter.bench.ts           alone
import {
  failed,
  printSuite,
  ratioFigure,
  scaled,
  type RatioFigure,
  type SuiteResult,
  type TargetCheck,
} from './harness';
import { buildMeterChild, meterInstructions } from './meterInstructions';
import { meterSides, type MeterKind } from './meterSides';
import { cpuOrInstructions, once } from './verdict';

const PAIRS = scaled(40, 8);
const WARMUP = 4;
/** Observed runs per timed sample: about 400 ms of CPU each. */
const PER_SAMPLE: Record<MeterKind, number> = { streamed: 12, json: 200 };
const TARGET = 1.1;
const LABEL: Record<MeterKind, string> = {
  streamed: 'a streamed answer, 2,000 chunks',
  json: 'a JSON answer, 16,000 characters',
};

/** CPU time of this process (the server's and the client's, the same on both sides), not wall time. */
async function time(work: () => Promise<void>): Promise<number> {
  const t0 = process.cpuUsage();
  await work();
  const t = process.cpuUsage(t0);
  return (t.user + t.system) / 1000;
}

interface CpuFigures {
  /** Metered ÷ told by hand. */
  readonly figure: RatioFigure;
  /** Metered ÷ a run with no model call. */
  readonly whole: RatioFigure;
  /** The hand side's median CPU per answer, ms. */
  readonly perAnswer: number;
}

/** One kind's target: CPU time when its spread is clear of it, else instructions per answer. */
function decide(kind: MeterKind, cpu: CpuFigures, built: () => Promise<void>): Promise<TargetCheck> {
  const name = `metered fetch, ${kind === 'json' ? 'a JSON answer' : 'a streamed answer'}`;
  return cpuOrInstructions({ name, goal: 'a passthrough fetch told by hand', limit: TARGET }, cpu.figure, async () => {
    await built();
    const { hand, metered } = await meterInstructions(kind);
    return {
      ratio: metered / hand,
      detail: `instructions/answer (metered ${metered.toFixed(0)}, by hand ${hand.toFixed(0)})`,
    };
  });
}

export async function run(): Promise<SuiteResult> {
  const sides = await meterSides();
  const cpu = {} as Record<MeterKind, CpuFigures>;
  try {
    for (const kind of ['streamed', 'json'] as const) {
      const n = PER_SAMPLE[kind];
      const sample = (side: 'hand' | 'metered' | 'none') => {
        const once = sides.once(side, kind);
        return async (): Promise<void> => {
          for (let i = 0; i < n; i++) await once();
        };
      };
      const [hand, metered, none] = [sample('hand'), sample('metered'), sample('none')];
      const ratios: number[] = [];
      const whole: number[] = [];
      const floors: number[] = [];
      for (let i = 0; i < PAIRS + WARMUP; i++) {
        const [h, m] = i % 2 === 0 ? [await time(hand), await time(metered)] : [NaN, await time(metered)];
        const h2 = Number.isNaN(h) ? await time(hand) : h;
        const z = await time(none);
        if (i < WARMUP) continue;
        ratios.push(m / h2);
        whole.push(m / z);
        floors.push(h2);
      }
      floors.sort((a, b) => a - b);
      cpu[kind] = {
        figure: ratioFigure(ratios),
        whole: ratioFigure(whole),
        perAnswer: floors[Math.floor(floors.length / 2)]! / n,
      };
    }
  } finally {
    await sides.close();
  }
  const built = once(buildMeterChild);
  const targets = [await decide('streamed', cpu.streamed, built), await decide('json', cpu.json, built)];
  return {
    suite: 'meter',
    columns: ['by hand: CPU per answer (median)', 'metered ÷ by hand (CPU)', 'metered ÷ no model call (CPU)'],
    rows: (['streamed', 'json'] as const).map((kind) => ({
      label: LABEL[kind],
      cells: [
        `${cpu[kind].perAnswer.toFixed(2)} ms`,
        `${cpu[kind].figure.median.toFixed(3)}×`,
        `${cpu[kind].whole.median.toFixed(3)}×`,
      ],
    })),
    targets,
  };
}

if (require.main === module) run().then(printSuite, failed);
