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
// per-pair ratios (new ÷ old), pooled over fresh processes, with quartiles. Target ≤ 1.05×.
//
//   npm run bench -- turncore                 through the runner
//   npx tsx bench/turnCore.bench.ts           alone
import { generateText } from 'ai';
import type { AgentLoop, LLMResponse, ToolCall } from '../lib/agent/AgentLoop';
import { FINAL_TEXT, mockModel, STEPS_PER_RUN, tools } from './aiSdkMock';
import {
  failed,
  formatNs,
  median,
  printSuite,
  ratioFigure,
  ratioTarget,
  runInChild,
  scaled,
  serveChild,
  type SuiteResult,
} from './harness';
import { buildTurnCores, loadTurnCore, ROUND_START, type TurnCore } from './roundStart';

const TARGET = 1.05;
const SAMPLES = scaled(101, 31);
const ADAPTER_TURNS = 100;
// A mirrored run allocates far more than an adapter turn (the AI SDK's messages and promises):
// samples of 20 runs caught a garbage collection or not, and their ratios spread 0.6×–1.8×. A
// sample of 100 runs holds several.
const MIRROR_RUNS = 100;
const WARMUP = scaled(3000, 800);

function zeroLatencyAgent(): AgentLoop {
  const toolReply: LLMResponse = {
    toolCalls: [{ id: 'call_1', name: 'list_files', input: { dir: '.' } }],
    usage: { inputTokens: 800, outputTokens: 30, costUsd: 0.003 },
  };
  const textReply: LLMResponse = { text: 'done', usage: { inputTokens: 900, outputTokens: 25, costUsd: 0.003 } };
  return {
    sendUserMessage: async () => toolReply,
    sendToolResults: async () => textReply,
    runTool: async (call: ToolCall) => ({ callId: call.id, output: 'README.md lib/' }),
  };
}

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

interface Side {
  readonly adapterTurn: () => Promise<unknown>;
  readonly mirrorRun: () => Promise<unknown>;
}

function side(core: TurnCore): Side {
  const adapter = new core.AgentWithStateMachine(zeroLatencyAgent(), { budget: { maxCostUsd: 1e9, strict: false } });
  const m = core.mirrorAISDK({
    model: mockModel(),
    tools,
    budget: { maxCostUsd: 1e9, strict: false },
    pricing: (u) => ((u.inputTokens ?? 0) + (u.outputTokens ?? 0)) * 1e-6,
  });
  return {
    adapterTurn: async () => {
      const r = await adapter.runTurn('What files are here?');
      if (r.outcome !== 'end_of_turn' || r.transitions !== 12)
        throw new Error(`adapter turn ended ${r.outcome} after ${r.transitions} moves`);
    },
    mirrorRun: async () => {
      const r = await generateText({ ...m.settings, prompt: 'list the files' });
      if (r.text !== FINAL_TEXT || m.result?.outcome !== 'end_of_turn')
        throw new Error(`mirrored run ended ${m.result?.outcome}: ${r.text}`);
    },
  };
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

export async function run(rounds = Number(process.env.BENCH_ROUNDS ?? scaled(3, 1))): Promise<SuiteResult> {
  const files = await buildTurnCores();
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
  const targets = [];
  for (const key of ['adapter', 'mirror'] as const) {
    const old = all.flatMap((s) => s[key].old);
    const now = all.flatMap((s) => s[key].now);
    const figure = ratioFigure(now.map((v, i) => v / old[i]!));
    const what = key === 'adapter' ? 'adapter turn (tool-use turn, 12 moves)' : 'mirror step (mirrorAISDK, mock model)';
    rows.push(
      { label: `${what}, round start (${ROUND_START.slice(0, 7)})`, cells: [formatNs(median(old)), ''] },
      { label: `${what}, now`, cells: [formatNs(median(now)), `${figure.median.toFixed(2)}×`] },
    );
    targets.push(
      ratioTarget(
        `${what}, now vs round start`,
        figure,
        TARGET,
        `the round start's bundle (${ROUND_START.slice(0, 7)})`,
      ),
    );
  }
  return { suite: 'turncore', columns: ['median', 'now ÷ round start'], rows, targets };
}

if (require.main === module) {
  const i = process.argv.indexOf('--measure');
  if (i !== -1) serveChild(() => measure(process.argv[i + 1]!, process.argv[i + 2]!));
  else run().then(printSuite, failed);
}
