// The metered fetch (`meteredFetch` of agent-state-machine/openai, inside `observeLoop`) against a
// bare passthrough `fetch` on the same answer from the same local server, with the real `openai`
// client reading it, both inside an observed run: a streamed answer of 2,000 chunks (read beside
// the SDK through a fold, cut-watch included) and a JSON answer of the same text.
//
// Target: the metering path costs at most 1.10× the passthrough. The passthrough's loop tells
// the run's mirror of its call by hand (the bound it sent, the usage the SDK parsed), as a loop
// without the meter would: both sides then do the same money work (gate, hold, charge, the run's
// moves), and the ratio is the metering's alone (reading the request's body, reading the answer
// beside the SDK, handing it on). The whole observed call against a run that makes no model call
// is shown beside it, without a target: that is the money core's cost too, which `turncore` and
// `mirror` measure against their own floors.
//
// Per pair of samples timed back to back (the order alternating, the first pairs a warm-up left
// out). A sample is several runs (one streamed answer is ~30 ms of CPU, a JSON one ~2 ms): timed
// one request at a time, the ratio's p25–p75 spread was 0.8×–1.6×; at 60 JSON answers a sample it
// was still ~1.0×–1.4× (a collection falls in one sample of a pair, not the other), so a sample
// is ~400 ms of CPU on each side.
//
//   npm run bench -- meter                 through the runner
//   npx tsx bench/meter.bench.ts           alone
import OpenAI from 'openai';
import { observeLoop } from '../lib/index';
import type { CompletionUsage } from 'openai/resources/completions';
import type { LLMResponse } from '../lib/agent/AgentLoop';
import { meteredFetch } from '../lib/integrations/openai';
import { chatWire } from '../lib/integrations/openai/chatWire';
import { mapOpenAIUsage } from '../lib/integrations/openai/fromOpenAIChat';
import { observeScope } from '../lib/observe/observeScope';
import { startOpenAIChatServer } from '../examples/servers/openaiChatServer';
import { failed, printSuite, ratioFigure, ratioTarget, scaled, type SuiteResult } from './harness';

const PAIRS = scaled(40, 8);
const WARMUP = 4;
/** Observed runs per timed sample: about 400 ms of CPU each. */
const STREAMED_PER_SAMPLE = 12;
const JSON_PER_SAMPLE = 200;
const TARGET = 1.1;
/** 16,000 characters: the local server streams 8 a chunk. */
const TEXT = 'abcdefg '.repeat(2_000);

const pricing = (u: { inputTokens?: number; outputTokens?: number }): number | undefined =>
  u.inputTokens === undefined || u.outputTokens === undefined ? undefined : (u.inputTokens + u.outputTokens) * 5e-6;

/** The median sample's CPU time per answer in it. */
const perAnswer = (sorted: readonly number[], runs: number): string =>
  (sorted[Math.floor(sorted.length / 2)]! / runs).toFixed(2);

export async function run(): Promise<SuiteResult> {
  const server = await startOpenAIChatServer({
    respond: () => ({ content: TEXT, usage: { prompt_tokens: 20, completion_tokens: 4_000 } }),
  });
  try {
    const bare = new OpenAI({ baseURL: server.baseURL, apiKey: 'sk-local', fetch: (i, init) => fetch(i, init) });
    const metered = new OpenAI({ baseURL: server.baseURL, apiKey: 'sk-local', fetch: meteredFetch });
    const request = {
      model: 'gpt-local',
      messages: [{ role: 'user' as const, content: 'go' }],
      max_completion_tokens: 8_000,
    };
    const streamOnce = async (client: OpenAI): Promise<LLMResponse> => {
      const stream = await client.chat.completions.create({
        ...request,
        stream: true,
        stream_options: { include_usage: true },
      });
      let text = '';
      let usage: CompletionUsage | undefined;
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta?.content ?? '';
        usage = chunk.usage ?? usage;
      }
      if (text.length !== TEXT.length) throw new Error(`read ${text.length} characters, expected ${TEXT.length}`);
      return { text, usage: mapOpenAIUsage(usage) };
    };
    const jsonOnce = async (client: OpenAI): Promise<LLMResponse> => {
      const completion = await client.chat.completions.create(request);
      if (completion.choices[0]?.message.content !== TEXT) throw new Error('the answer was not read whole');
      return chatWire.read(completion);
    };
    /** Money at the loop: the loop tells the run's mirror of its call (its bound, then its answer). */
    const byHand = (call: () => Promise<LLMResponse>) => async (): Promise<void> => {
      const { mirror } = observeScope.getStore()!;
      const bound = chatWire.bound(request);
      if (typeof bound === 'string') throw new Error(bound);
      const stop = await mirror.modelCallStart(bound);
      if (stop !== undefined) throw new Error(`the run refused the call: ${stop.message}`);
      mirror.modelResponse(await call());
    };
    const observed = (work: () => Promise<unknown>, calls: boolean, runs: number) => async (): Promise<void> => {
      for (let i = 0; i < runs; i++) {
        const { result } = await observeLoop({ budget: { maxCostUsd: 100 }, pricing, logger: false }, 'go', work);
        if (calls && (result.outcome !== 'end_of_turn' || result.usage.outputTokens !== 4_000))
          throw new Error(`the observed run ended ${result.outcome}: ${result.error?.message}`);
      }
    };
    // CPU time of this process (the server's and the client's, the same on both sides), not wall
    // time: the verdict must not turn on what else the machine runs.
    const time = async (work: () => Promise<void>): Promise<number> => {
      const t0 = process.cpuUsage();
      await work();
      const t = process.cpuUsage(t0);
      return (t.user + t.system) / 1000;
    };
    /** `hand` and `meter` back to back (the order alternating), then `none`: a run with no model call. */
    const measure = async (hand: () => Promise<void>, meter: () => Promise<void>, none: () => Promise<void>) => {
      const ratios: number[] = [];
      const whole: number[] = [];
      const floors: number[] = [];
      for (let i = 0; i < PAIRS + WARMUP; i++) {
        const [h, m] = i % 2 === 0 ? [await time(hand), await time(meter)] : [NaN, await time(meter)];
        const h2 = Number.isNaN(h) ? await time(hand) : h;
        const n = await time(none);
        if (i < WARMUP) continue;
        ratios.push(m / h2);
        whole.push(m / n);
        floors.push(h2);
      }
      return { figure: ratioFigure(ratios), whole: ratioFigure(whole), floors: floors.sort((a, b) => a - b) };
    };
    const streamed = await measure(
      observed(
        byHand(() => streamOnce(bare)),
        true,
        STREAMED_PER_SAMPLE,
      ),
      observed(() => streamOnce(metered), true, STREAMED_PER_SAMPLE),
      observed(() => streamOnce(bare), false, STREAMED_PER_SAMPLE),
    );
    const json = await measure(
      observed(
        byHand(() => jsonOnce(bare)),
        true,
        JSON_PER_SAMPLE,
      ),
      observed(() => jsonOnce(metered), true, JSON_PER_SAMPLE),
      observed(() => jsonOnce(bare), false, JSON_PER_SAMPLE),
    );
    const cells = (f: Awaited<ReturnType<typeof measure>>, runs: number): string[] => [
      `${perAnswer(f.floors, runs)} ms`,
      `${f.figure.median.toFixed(3)}×`,
      `${f.whole.median.toFixed(3)}×`,
    ];
    return {
      suite: 'meter',
      columns: [
        'passthrough, told by hand: CPU per answer (median)',
        'metered / passthrough told by hand',
        'metered / passthrough, no model call',
      ],
      rows: [
        { label: 'a streamed answer, 2,000 chunks', cells: cells(streamed, STREAMED_PER_SAMPLE) },
        { label: 'a JSON answer, 16,000 characters', cells: cells(json, JSON_PER_SAMPLE) },
      ],
      targets: [
        ratioTarget('metered fetch, a streamed answer', streamed.figure, TARGET, 'a passthrough fetch told by hand'),
        ratioTarget('metered fetch, a JSON answer', json.figure, TARGET, 'a passthrough fetch told by hand'),
      ],
    };
  } finally {
    await server.close();
  }
}

if (require.main === module) run().then(printSuite, failed);
