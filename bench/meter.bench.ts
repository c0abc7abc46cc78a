// The metered fetch (`meteredFetch` of agent-state-machine/openai, inside `observeLoop`) against a
// bare passthrough `fetch` on the same answer from the same local server, with the real `openai`
// client reading it, both inside an observed run: a streamed answer of 2,000 chunks (read beside the SDK through a tee and
// folded, cut-watch included) and a JSON answer of the same text. Target: the metered path costs
// at most 1.10× the passthrough, per pair of samples timed back to back (the order alternating,
// the first pairs a warm-up left out). A sample is several runs (one streamed answer is ~30 ms of
// CPU, a JSON one ~2 ms): timed one request at a time, the ratio's p25–p75 spread was 0.8×–1.6×;
// at 60 JSON answers a sample it was still ~1.0×–1.4× (a collection falls in one sample of a pair,
// not the other), so a sample is ~400 ms of CPU on each side.
//
//   npm run bench -- meter                 through the runner
//   npx tsx bench/meter.bench.ts           alone
import OpenAI from 'openai';
import { observeLoop } from '../lib/index';
import { meteredFetch } from '../lib/integrations/openai';
import { startOpenAIChatServer } from '../examples/servers/openaiChatServer';
import { failed, printSuite, ratioFigure, ratioTarget, scaled, type SuiteResult } from './harness';

const PAIRS = scaled(30, 8);
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
    const streamOnce = async (client: OpenAI): Promise<void> => {
      const stream = await client.chat.completions.create({
        ...request,
        stream: true,
        stream_options: { include_usage: true },
      });
      let n = 0;
      for await (const chunk of stream) n += chunk.choices[0]?.delta?.content?.length ?? 0;
      if (n !== TEXT.length) throw new Error(`read ${n} characters, expected ${TEXT.length}`);
    };
    const jsonOnce = async (client: OpenAI): Promise<void> => {
      const completion = await client.chat.completions.create(request);
      if (completion.choices[0]?.message.content !== TEXT) throw new Error('the answer was not read whole');
    };
    // Both sides run inside an observed run, so the ratio is the metering's alone: the floor's
    // client sends through a passthrough fetch (the run sees no model call, and ends so).
    const observed = (work: () => Promise<void>, meters: boolean, runs: number) => async (): Promise<void> => {
      for (let i = 0; i < runs; i++) {
        const { result } = await observeLoop({ budget: { maxCostUsd: 100 }, pricing, logger: false }, 'go', work);
        if (meters && result.outcome !== 'end_of_turn')
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
    const measure = async (floor: () => Promise<void>, metered: () => Promise<void>) => {
      const ratios: number[] = [];
      const floors: number[] = [];
      for (let i = 0; i < PAIRS + WARMUP; i++) {
        const [f, m] = i % 2 === 0 ? [await time(floor), await time(metered)] : [NaN, await time(metered)];
        const f2 = Number.isNaN(f) ? await time(floor) : f;
        if (i < WARMUP) continue;
        ratios.push(m / f2);
        floors.push(f2);
      }
      return { figure: ratioFigure(ratios), floors: floors.sort((a, b) => a - b) };
    };
    const streamed = await measure(
      observed(() => streamOnce(bare), false, STREAMED_PER_SAMPLE),
      observed(() => streamOnce(metered), true, STREAMED_PER_SAMPLE),
    );
    const json = await measure(
      observed(() => jsonOnce(bare), false, JSON_PER_SAMPLE),
      observed(() => jsonOnce(metered), true, JSON_PER_SAMPLE),
    );
    return {
      suite: 'meter',
      columns: ['passthrough, CPU per answer (median)', 'metered / passthrough'],
      rows: [
        {
          label: 'a streamed answer, 2,000 chunks',
          cells: [`${perAnswer(streamed.floors, STREAMED_PER_SAMPLE)} ms`, `${streamed.figure.median.toFixed(3)}×`],
        },
        {
          label: 'a JSON answer, 16,000 characters',
          cells: [`${perAnswer(json.floors, JSON_PER_SAMPLE)} ms`, `${json.figure.median.toFixed(3)}×`],
        },
      ],
      targets: [
        ratioTarget('metered fetch, a streamed answer', streamed.figure, TARGET, 'a passthrough fetch'),
        ratioTarget('metered fetch, a JSON answer', json.figure, TARGET, 'a passthrough fetch'),
      ],
    };
  } finally {
    await server.close();
  }
}

if (require.main === module) run().then(printSuite, failed);
