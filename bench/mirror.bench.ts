// The mirror on a framework's loop: what `mirrorAISDK` adds to an AI SDK `generateText` loop,
// per step, against the same loop alone, timed side by side in the same process.
//
//  - bare:     generateText({ model, tools, stopWhen: stepCountIs(20), prompt }) over a mock
//              model (MockLanguageModelV3) that answers at once: a tool call, then text (2 steps,
//              1 tool call, per run).
//  - mirrored: the same call with `...mirrorAISDK({ model, tools, budget }).settings` — one
//              mirror for all runs, as a ToolLoopAgent keeps one — default logger, history 100,
//              a dollar budget, so that every check runs.
//
// Samples alternate (bare, mirrored, mirrored, bare, …) so load hits both alike; a sample is
// the mean of a batch of runs; figures are the medians, in several fresh processes (rounds).
// The ratio is mirrored / bare per run; the overhead per step is (mirrored − bare) / 2.
// The SDK's integration is loaded from lib/ through tsx (it is a subpath, not in the main bundle).
//
//   npm run bench -- mirror                 this suite through the runner
//   npx tsx bench/mirror.bench.ts --measure one process, one round, printed
import { generateText, stepCountIs } from 'ai';
import { mirrorAISDK } from '../lib/integrations/ai-sdk';
import {
  failed,
  formatNs,
  formatRatio,
  median,
  printSuite,
  quantile,
  ratioFigure,
  ratioTarget,
  runInChild,
  scaled,
  serveChild,
  type SuiteResult,
} from './harness';
import { FINAL_TEXT, mockModel, STEPS_PER_RUN, tools } from './aiSdkMock';

/** The target: the mirror at most doubles a zero-latency loop's own cost (real model calls take 10⁵–10⁶× longer). */
const TARGET_RATIO = 2;
const RUNS_PER_SAMPLE = 20;
// `--quick` (BENCH_QUICK=1): fewer samples, warm-up runs and rounds; the same measurement.
const SAMPLES = scaled(101, 31);
const WARMUP_RUNS = scaled(2_000, 400);

async function sample(run: () => Promise<unknown>, runs: number): Promise<number> {
  const start = process.hrtime.bigint();
  for (let i = 0; i < runs; i++) await run();
  return Number(process.hrtime.bigint() - start) / runs;
}

export interface MirrorSample {
  readonly bareNs: number;
  readonly mirroredNs: number;
  readonly ratioP25: number;
  readonly ratioP75: number;
}

export async function measureRound(): Promise<MirrorSample> {
  const bareModel = mockModel();
  const m = mirrorAISDK({
    model: mockModel(),
    tools,
    budget: { maxCostUsd: 1e9, strict: false },
    pricing: (u) => ((u.inputTokens ?? 0) + (u.outputTokens ?? 0)) * 1e-6,
  });
  const bare = (): Promise<unknown> =>
    generateText({ model: bareModel, tools, stopWhen: stepCountIs(20), prompt: 'list the files' });
  const mirrored = (): Promise<unknown> => generateText({ ...m.settings, prompt: 'list the files' });

  const check = (await mirrored()) as { text: string };
  if (check.text !== FINAL_TEXT || m.result?.outcome !== 'end_of_turn')
    throw new Error(`mirrored run ended ${m.result?.outcome}: ${check.text}`);
  for (let i = 0; i < WARMUP_RUNS; i += RUNS_PER_SAMPLE) {
    await sample(bare, RUNS_PER_SAMPLE);
    await sample(mirrored, RUNS_PER_SAMPLE);
  }
  const b: number[] = [];
  const w: number[] = [];
  for (let s = 0; s < SAMPLES; s++) {
    if (s % 2 === 0) {
      b.push(await sample(bare, RUNS_PER_SAMPLE));
      w.push(await sample(mirrored, RUNS_PER_SAMPLE));
    } else {
      w.push(await sample(mirrored, RUNS_PER_SAMPLE));
      b.push(await sample(bare, RUNS_PER_SAMPLE));
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
  const runs = 1 + WARMUP_RUNS + SAMPLES * RUNS_PER_SAMPLE;
  if (m.mirror.turn !== runs) throw new Error(`the mirror saw ${m.mirror.turn} runs, expected ${runs}`);
  if (m.mirror.usage.llmCalls !== runs * STEPS_PER_RUN)
    throw new Error(`the mirror charged ${m.mirror.usage.llmCalls} LLM calls, expected ${runs * STEPS_PER_RUN}`);
  const ratios = b.map((x, i) => w[i]! / x);
  return {
    bareNs: median(b),
    mirroredNs: median(w),
    ratioP25: quantile(ratios, 0.25),
    ratioP75: quantile(ratios, 0.75),
  };
}

export async function run(rounds = Number(process.env.BENCH_ROUNDS ?? scaled(3, 2))): Promise<SuiteResult> {
  const list: MirrorSample[] = [];
  for (let r = 0; r < rounds; r++) {
    const s = await runInChild<MirrorSample>(__filename, ['--measure']);
    list.push(s);
    console.log(
      `  round ${r + 1}/${rounds}  bare ${formatNs(s.bareNs)}/run, mirrored ${formatNs(s.mirroredNs)}/run: ` +
        `${formatRatio(s.mirroredNs / s.bareNs)} (paired p25 ${formatRatio(s.ratioP25)}, p75 ${formatRatio(s.ratioP75)})`,
    );
  }
  const ratios = list.map((s) => s.mirroredNs / s.bareNs);
  const ratio = median(ratios);
  const perStep = median(list.map((s) => (s.mirroredNs - s.bareNs) / STEPS_PER_RUN));
  return {
    suite: 'mirror',
    columns: ['bare /run', 'mirrored /run', 'ratio', 'overhead /step', `ratio over ${rounds} rounds`],
    rows: [
      {
        label: 'generateText, 2 steps (tool call, text), mock model',
        cells: [
          formatNs(median(list.map((s) => s.bareNs))),
          formatNs(median(list.map((s) => s.mirroredNs))),
          formatRatio(ratio),
          formatNs(perStep),
          `${formatRatio(Math.min(...ratios))} – ${formatRatio(Math.max(...ratios))}`,
        ],
      },
    ],
    targets: [
      // One ratio per round (each the ratio of that round's medians, timed side by side).
      ratioTarget('mirrorAISDK on generateText vs the loop alone', ratioFigure(ratios), TARGET_RATIO, 'the loop alone'),
    ],
  };
}

if (require.main === module) {
  if (process.argv.includes('--measure')) {
    if (!serveChild(measureRound)) measureRound().then((s) => console.log(s), failed);
  } else {
    run().then(printSuite, failed);
  }
}
