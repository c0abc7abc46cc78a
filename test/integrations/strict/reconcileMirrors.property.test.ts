import { createOpenAI } from '@ai-sdk/openai';
import { createReactAgent } from '@langchain/langgraph/prebuilt';
import { ChatOpenAI } from '@langchain/openai';
import { generateText, streamText } from 'ai';
import fc from 'fast-check';
import { runBatch, type BatchReport, type FrameworkTask, type StepMirror } from 'agent-state-machine';
import { mirrorAISDK } from '../../../lib/integrations/ai-sdk';
import { LangGraphMirror } from '../../../lib/integrations/langgraph';
import {
  billingScripts,
  onTimeScripts,
  startBillingServer,
  type BillingServer,
  type Script,
} from '../../helpers/billingServer';
import { localPricing as pricing } from '../../helpers/localPricing';
import { expectBilledAsAnswered, expectReconciled, expectStormCompleted } from '../../helpers/reconciliation';

// The reconciliation property on the framework mirrors, in runBatch of framework tasks: the AI
// SDK's own provider (@ai-sdk/openai) under mirrorAISDK, and LangChain's ChatOpenAI in a
// LangGraph ReAct agent under LangGraphMirror, each retrying once on its own, against a server
// that bills what the provider would (every request it takes, in full; nothing for a 429), each
// reply chosen by fast-check.
// - In a strict batch, with replies that come after the client gave up: the server billed no
//   more than the cap (but for the documented overshoot of answers past their max tokens sent
//   whole), no more than the report's billed + uncertain, and the report's billed is no more than
//   the bill.
// - With no reply late and no cap near: the report's billed is, to the cent, what the server
//   billed for the answers it sent whole with their usage.

const MAX_OUTPUT = 2000;
// Short for the late answers, long enough that a loaded machine reads the others in time.
const TIMEOUT_MS = 500;
const CAP = 0.1;

/** A framework's run of one task against the server: `timeoutMs` is the client's, undefined for its default. */
type Mirror = {
  name: string;
  drive(mirror: StepMirror, baseURL: string, stream: boolean, timeoutMs?: number): Promise<unknown>;
};

/** A `fetch` that gives up after `ms`, as a client's timeout does. */
const timingOut =
  (ms: number | undefined): typeof fetch =>
  (input, init) =>
    fetch(input, {
      ...init,
      ...(ms === undefined
        ? {}
        : { signal: init?.signal ? AbortSignal.any([init.signal, AbortSignal.timeout(ms)]) : AbortSignal.timeout(ms) }),
    });

const MIRRORS: Mirror[] = [
  {
    name: 'mirrorAISDK (@ai-sdk/openai)',
    drive: async (mirror, baseURL, stream, timeoutMs) => {
      const model = createOpenAI({ apiKey: 'sk-local', baseURL, fetch: timingOut(timeoutMs) }).chat('gpt-local');
      const m = mirrorAISDK({ mirror, model });
      const call = { ...m.settings, prompt: 'Say done', maxOutputTokens: MAX_OUTPUT, maxRetries: 1 };
      if (!stream) return (await generateText(call)).text;
      let failure: unknown;
      const streamed = streamText({ ...call, onError: ({ error }) => void (failure ??= error) });
      const text = await streamed.text;
      if (failure !== undefined) throw failure;
      return text;
    },
  },
  {
    name: 'LangGraphMirror (ChatOpenAI)',
    drive: async (mirror, baseURL, stream, timeoutMs) => {
      const lg = new LangGraphMirror({ mirror, observe: 'wrapped' });
      const llm = new ChatOpenAI({
        model: 'gpt-local',
        apiKey: 'sk-local',
        configuration: { baseURL },
        maxTokens: MAX_OUTPUT,
        maxRetries: 1,
        streaming: stream,
        ...(timeoutMs === undefined ? {} : { timeout: timeoutMs }),
      });
      const agent = createReactAgent({ llm: lg.wrapModel(llm), tools: lg.wrapTools([]) });
      return lg.run(agent, { messages: [{ role: 'user', content: 'Say done' }] });
    },
  },
];

describe.each(MIRRORS)('$name in runBatch against an adversarial billing server', (path) => {
  let billing: BillingServer;
  beforeAll(async () => {
    billing = await startBillingServer(10 * TIMEOUT_MS);
  });
  afterAll(() => billing.server.close());
  beforeEach(() => {
    // LangChain logs each error a handler throws with console.error.
    jest.spyOn(console, 'error').mockImplementation(() => undefined);
  });
  afterEach(() => jest.restoreAllMocks());

  async function batch(script: Script, cap: number, timeoutMs?: number, tasks = 8): Promise<BatchReport> {
    billing.reset(script.moves);
    const report = await runBatch(
      Array.from({ length: tasks }, (_, i): FrameworkTask => ({
        id: `t${i}`,
        input: 'Say done',
        drive: (mirror) => path.drive(mirror, billing.server.baseURL, script.stream, timeoutMs),
      })),
      {
        logger: false,
        concurrency: 4,
        pricing,
        total: { maxCostUsd: cap, strict: true },
      },
    );
    expect(billing.server.rejected).toEqual([]);
    return report;
  }

  it('strict: the cap holds, billed ≤ reported billed + uncertain, and reported billed ≤ billed', async () => {
    await fc.assert(
      fc.asyncProperty(billingScripts(8), async (script) => {
        // 12 tasks of about $0.0101 each: the cap binds.
        const report = await batch(script, CAP, TIMEOUT_MS, 12);
        expectReconciled(report, billing.billing, CAP);
      }),
      { numRuns: 6, seed: 20261204 },
    );
  }, 240_000);

  // A stream cut after its usage chunk is left out: the framework ends the call in an error
  // without the usage it read, so the mirror holds it uncertain (over the invoice, never under;
  // the next test). The ready-made loops and the metered fetch bill it (answeredBilled.property).
  it('on time: reported billed = what the server billed for the answers it sent whole', async () => {
    await fc.assert(
      fc.asyncProperty(onTimeScripts(8, ['cutAfterUsage']), async (script) => {
        const report = await batch(script, 10);
        expectBilledAsAnswered(report, billing.billing);
      }),
      { numRuns: 6, seed: 20261204 },
    );
  }, 240_000);

  it('a stream cut after its usage chunk: the framework fails the call, so it is held uncertain, covering its bill', async () => {
    const report = await batch({ moves: ['cutAfterUsage'], stream: true }, 10);
    expect(billing.billing.usd).toBeGreaterThan(0);
    expect(report.totals.costUsd - (report.totals.uncertainUsd ?? 0)).toBeCloseTo(0, 12);
    expect(report.totals.costUsd).toBeGreaterThanOrEqual(billing.billing.usd);
  }, 60_000);

  it('a 429 storm (half the requests refused, none billed): a strict batch completes what the cap allows', async () => {
    // An answer bills about $0.0101 (2,000 output tokens and the input at $5 per million): 9 fit in $0.10.
    const report = await batch({ moves: ['429', 'ok'], stream: false }, CAP, undefined, 12);
    expectStormCompleted(report, billing.billing.usd, CAP);
  }, 120_000);
});
