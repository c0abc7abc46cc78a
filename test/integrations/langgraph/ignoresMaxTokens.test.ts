// Issue 50: LangGraph on ChatOpenAI against a local Chat Completions server that ignores max
// tokens (it answers twice the request's max, billing every token) reported $0 for what the
// server billed whenever no cap was strict: a stream the mirror cut at its bound, or an answer
// that came back without usage, had no worst case computed, so it was charged nothing. Money
// that may have been spent counts as spent: billed when usage came back, else uncertain at the
// call's worst case, never $0. Each holds observing the graph or only what it wrapped, streamed
// or not, with no cap, a plain one or a strict one, and in a batch with its journal and ledger.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { tool } from '@langchain/core/tools';
import { createReactAgent } from '@langchain/langgraph/prebuilt';
import { ChatOpenAI } from '@langchain/openai';
import { z } from 'zod';
import { formatBatchReport, runBatch, type StepMirror } from 'agent-state-machine';
import { LangGraphMirror, type LangGraphObserve } from '../../../lib/integrations/langgraph';
import { startOpenAIChatServer, type OpenAIChatServer } from '../../../examples/servers/openaiChatServer';
import { localPricing as pricing, USD_PER_TOKEN } from '../../helpers/localPricing';

const MAX = 100;
const echo = tool(async ({ text }: { text: string }) => `echo: ${text}`, {
  name: 'echo',
  description: 'Echoes its text',
  schema: z.object({ text: z.string() }),
});
const billedInput = (body: unknown): number => Math.ceil(JSON.stringify(body).length / 4);

/** What the server does with a request: answer within the bound, or past it (twice the max), with its usage or none. */
type Move = 'ok' | 'overBound' | 'overBoundNoUsage';

let server: OpenAIChatServer;
let script: Move[] = ['ok'];
let requests = 0;
/** What the server billed, and how much of it past the requests' bounds. */
const bill = { usd: 0, overshotUsd: 0 };
beforeAll(async () => {
  server = await startOpenAIChatServer({
    ignoresMaxTokens: true,
    respond: (body: { max_tokens?: number; max_completion_tokens?: number }) => {
      const move = script[requests++ % script.length]!;
      const max = body.max_completion_tokens ?? body.max_tokens ?? MAX;
      const output = move === 'ok' ? 1 : 2 * max;
      bill.usd += (billedInput(body) + output) * USD_PER_TOKEN;
      bill.overshotUsd += Math.max(0, output - max) * USD_PER_TOKEN;
      // Its text is as long as its output (4 characters a token), so a stream passes its bound as it comes.
      const content = move === 'ok' ? 'done' : 'tok '.repeat(output);
      const usage =
        move === 'overBoundNoUsage' ? null : { prompt_tokens: billedInput(body), completion_tokens: output };
      return { content, usage, model: 'gpt-local' };
    },
  });
});
afterAll(() => server.close());
beforeEach(() => {
  // LangChain logs each error a raising handler throws (a cut stream) with console.error.
  jest.spyOn(console, 'error').mockImplementation(() => undefined);
});
afterEach(() => jest.restoreAllMocks());

function play(moves: Move[]): void {
  script = moves;
  requests = 0;
  Object.assign(bill, { usd: 0, overshotUsd: 0 });
}

const llm = (streaming: boolean) =>
  new ChatOpenAI({
    model: 'gpt-local',
    apiKey: 'sk-local',
    configuration: { baseURL: server.baseURL },
    maxRetries: 0,
    streaming,
    maxTokens: MAX,
  });

/** One ReAct agent's run on `lg`, its model and tools wrapped when it observes only what it wrapped. */
async function runAgent(lg: LangGraphMirror, streaming: boolean): Promise<unknown> {
  const model = llm(streaming);
  const agent =
    lg.observe === 'wrapped'
      ? createReactAgent({ llm: lg.wrapModel(model), tools: lg.wrapTools([echo]) })
      : createReactAgent({ llm: model, tools: [echo] });
  return lg.run(agent, { messages: [{ role: 'user', content: 'Say tok, at length' }] }).then(
    () => undefined,
    (e: unknown) => e,
  );
}

type Cap = 'no cap' | 'a plain cap' | 'a strict cap';
const budgetOf = (cap: Cap) => (cap === 'no cap' ? {} : { budget: { maxCostUsd: 1, strict: cap === 'a strict cap' } });

describe.each<LangGraphObserve>(['graph', 'wrapped'])("LangGraphMirror (observe '%s')", (observe) => {
  describe.each<Cap>(['no cap', 'a plain cap', 'a strict cap'])('with %s', (cap) => {
    it('a streamed answer past its bound is cut there and charged at its worst case: uncertain, never $0', async () => {
      play(['overBound']);
      const lg = new LangGraphMirror({ pricing, logger: false, observe, ...budgetOf(cap) });
      const error = await runAgent(lg, true);
      expect(String(error)).toMatch(/cut at its bound/);
      expect(bill.usd).toBeGreaterThan(0);
      expect(lg.usage.costUsd).toBeGreaterThanOrEqual(bill.usd);
      expect(lg.usage.uncertainUsd).toBe(lg.usage.costUsd);
    });

    it.each([
      ['sent whole', false],
      ['streamed', true],
    ])('an answer %s without usage is charged at its worst case: uncertain, never $0', async (_, streaming) => {
      play(['overBoundNoUsage']);
      const lg = new LangGraphMirror({ pricing, logger: false, observe, ...budgetOf(cap) });
      await runAgent(lg, streaming);
      expect(lg.usage.costUsd).toBeGreaterThanOrEqual(bill.usd);
      expect(lg.usage.uncertainUsd).toBe(lg.usage.costUsd);
    });

    it('an answer sent whole past its bound, with its usage, is billed in full', async () => {
      play(['overBound']);
      const lg = new LangGraphMirror({ pricing, logger: false, observe, ...budgetOf(cap) });
      await runAgent(lg, false);
      expect(lg.usage.outputTokens).toBe(2 * MAX);
      expect(lg.usage.costUsd).toBeCloseTo(bill.usd, 12);
      expect(lg.usage.uncertainUsd).toBe(0);
      if (cap === 'a strict cap') expect(lg.result?.error?.message).toMatch(/past its bound of 100 \(100 over/);
    });
  });

  describe('in a batch with its journal and ledger', () => {
    let dir: string;
    beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'asm-langgraph-ignores-max-'))));
    afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

    const batch = (tasks: number, cap: number, strict: boolean, streaming: boolean, concurrency = 3) =>
      runBatch(
        Array.from({ length: tasks }, (_, i) => ({
          id: `t${String(i).padStart(2, '0')}`,
          input: 'Say tok, at length',
          drive: (mirror: StepMirror) => runAgent(new LangGraphMirror({ mirror, observe }), streaming),
        })),
        { logger: false, pricing, historyDir: dir, concurrency, total: { maxCostUsd: cap, strict } },
      );

    it.each([
      ['sent whole', false],
      ['streamed', true],
    ])(
      'under a plain cap, answers %s past their bounds are all in the totals: billed or uncertain, never $0',
      async (_, streaming) => {
        play(['ok', 'overBound', 'overBoundNoUsage']);
        const report = await batch(9, 1, false, streaming);
        expect(report.totals.costUsd).toBeGreaterThanOrEqual(bill.usd);
        expect(report.totals.uncertainUsd).toBeGreaterThan(0);
        expect(formatBatchReport(report)).toMatch(/Money: \$\d+\.\d{4} billed, \$\d+\.\d{4} uncertain/);
      },
    );

    it('under a strict cap, an answer sent whole past its bound stops the batch: the bill within the cap and one overshoot per run in flight', async () => {
      play(['ok', 'ok', 'ok', 'overBound']);
      const concurrency = 3;
      const cap = 0.05;
      const report = await batch(20, cap, true, false, concurrency);
      expect(report.stopped?.message).toMatch(/past its bound of 100 \(100 over/);
      const stopped = report.runs.filter((r) => r.outcome === 'budget_exceeded');
      expect(stopped.length).toBeGreaterThanOrEqual(1);
      const file = fs.readFileSync(stopped[0]!.historyFile!, 'utf8');
      expect(file).toContain('"boundExceeded":{"outputTokens":200,"maxOutputTokens":100,"overshootTokens":100');
      expect(report.totals.costUsd).toBeGreaterThanOrEqual(bill.usd - 1e-12);
      expect(bill.usd).toBeLessThanOrEqual(cap + concurrency * (MAX * USD_PER_TOKEN));
      expect(bill.overshotUsd).toBeLessThanOrEqual(concurrency * MAX * USD_PER_TOKEN);
    });
  });
});
