import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, streamText, tool } from 'ai';
import { z } from 'zod';
import { loadHistory, validateHistory } from 'agent-state-machine/history';
import { runBatch, type FrameworkTask } from 'agent-state-machine';
import { DEFAULT_WRAP_UP_INSTRUCTION } from '../../../lib/agent/BudgetEndings';
import { mirrorAISDK } from '../../../lib/integrations/ai-sdk';
import { startOpenAIChatServer, type OpenAIChatServer } from '../../../examples/servers/openaiChatServer';
import { localPricing, USD_PER_TOKEN } from '../../helpers/localPricing';

// `budget.wrapUp` on the AI SDK mirror, with the real @ai-sdk/openai client against a local
// Chat Completions server that bills every request in full (every output token it allows): an
// agent that would call tools for ever ends with the model's answer within the cap.

/** What a request's text says to the model: its user messages, in order. */
type Body = {
  tool_choice?: unknown;
  tools?: unknown[];
  messages: Array<{ role: string; content: unknown }>;
  max_completion_tokens?: number;
  max_tokens?: number;
};
const userTexts = (body: Body): string[] =>
  body.messages
    .filter((m) => m.role === 'user')
    .map((m) =>
      typeof m.content === 'string'
        ? m.content
        : (m.content as Array<{ text?: string }>).map((p) => p.text ?? '').join(''),
    );

/** What the model answers a final call. */
const ANSWER = 'Oslo is mild: 21 °C, as far as I found.';

/** The server: a tool call for every request that may call tools, an answer for one that may not; each billed in full. */
interface EndlessServer {
  server: OpenAIChatServer;
  /** USD billed, by API key (a run's), and in all. */
  billed: Map<string, number>;
  readonly total: number;
}

let server: EndlessServer | undefined;
let dir: string;
beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-mirror-wrap-'))));
afterEach(async () => {
  await server?.server.close();
  server = undefined;
  fs.rmSync(dir, { recursive: true, force: true });
});

async function serve(): Promise<EndlessServer> {
  const billed = new Map<string, number>();
  let calls = 0;
  const s = await startOpenAIChatServer({
    respond: (body: Body, _i, key) => {
      const usage = {
        prompt_tokens: Math.ceil(JSON.stringify(body).length / 4),
        completion_tokens: body.max_completion_tokens ?? body.max_tokens ?? 0,
      };
      billed.set(key, (billed.get(key) ?? 0) + (usage.prompt_tokens + usage.completion_tokens) * USD_PER_TOKEN);
      if (body.tool_choice === 'none') return { content: ANSWER, usage };
      calls += 1;
      return { toolCalls: [{ id: `call_${calls}`, name: 'weather', arguments: '{"city":"Oslo"}' }], usage };
    },
  });
  server = {
    server: s,
    billed,
    get total() {
      return [...billed.values()].reduce((a, b) => a + b, 0);
    },
  };
  return server;
}

const weather = tool({
  description: 'The weather in a city',
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }) => `mild in ${city}, 21 °C`,
});
const modelOf = (s: OpenAIChatServer, key = 'sk-local') =>
  createOpenAI({ apiKey: key, baseURL: s.baseURL }).chat('gpt-local');

describe('mirrorAISDK with budget.wrapUp, against a local server', () => {
  it.each([
    ['generateText', false],
    ['streamText', true],
  ])(
    '%s: an endless tool-calling agent under a strict cap ends wrapped_up with an answer, billed within the cap',
    async (_name, stream) => {
      const { server: s, billed } = await serve();
      const historyFile = path.join(dir, 'run.jsonl');
      const cap = 0.05;
      const m = mirrorAISDK({
        model: modelOf(s),
        tools: { weather },
        pricing: localPricing,
        budget: { maxCostUsd: cap, strict: true, wrapUp: true, visible: true },
        maxSteps: 1000,
        historyFile,
        logger: false,
      });
      const settings = { ...m.settings, prompt: 'Weather in Oslo, again and again?', maxOutputTokens: 200 };
      const text = stream ? await streamText(settings).text : (await generateText(settings)).text;
      m.close();
      expect(text).toBe(ANSWER);
      expect(m.result).toMatchObject({ outcome: 'wrapped_up', text });
      expect(m.result!.usage.costUsd).toBeLessThanOrEqual(cap);
      // What the server billed, every output token each request allowed.
      expect(billed.get('sk-local')).toBeLessThanOrEqual(cap);
      const bodies = s.exchanges.map((e) => e.body as Body);
      expect(s.rejected).toEqual([]);
      expect(bodies.length).toBeGreaterThan(3);
      expect(s.exchanges.every((e) => e.stream === stream)).toBe(true);
      // Only the last request is the final call: no tool to call, the instruction then the note last.
      expect(bodies.slice(0, -1).every((b) => b.tool_choice !== 'none')).toBe(true);
      const last = bodies.at(-1)!;
      expect(last.tool_choice).toBe('none');
      expect(userTexts(last).at(-2)).toBe(DEFAULT_WRAP_UP_INSTRUCTION);
      // Every request carries the budget note, once, its last user message.
      for (const body of bodies) {
        expect(userTexts(body).at(-1)).toMatch(/^Budget left: \$0\.0\d+ of \$0\.0500 cost\.$/);
        expect(userTexts(body).filter((t) => t.startsWith('Budget left:'))).toHaveLength(1);
      }
      // The history file: WrappingUp, then EndOfTurn with the answer (outcome wrapped_up); valid.
      const history = await loadHistory(historyFile);
      expect(validateHistory(history.entries).issues).toEqual([]);
      const tail = history.records.slice(-2);
      expect(tail.map((r) => r.to)).toEqual(['WrappingUp', 'EndOfTurn']);
      expect(tail[1]!.data).toMatchObject({ outcome: 'wrapped_up', answer: text });
      // The unused hold went back: nothing is held once the run ended.
      expect(m.mirror.usage.costUsd).toBeLessThanOrEqual(cap);
    },
  );

  it('a tool result too long to fit is withheld from the final call, answered as the budget running out', async () => {
    const { server: s, billed } = await serve();
    const long = tool({
      description: 'The weather in a city',
      inputSchema: z.object({ city: z.string() }),
      execute: async () => 'x'.repeat(40_000),
    });
    const m = mirrorAISDK({
      model: modelOf(s),
      tools: { weather: long },
      pricing: localPricing,
      budget: { maxCostUsd: 0.03, strict: true, wrapUp: true },
      maxSteps: 100,
      logger: false,
    });
    const { text } = await generateText({ ...m.settings, prompt: 'Weather in Oslo?', maxOutputTokens: 200 });
    expect(m.result).toMatchObject({ outcome: 'wrapped_up', text });
    expect(billed.get('sk-local')).toBeLessThanOrEqual(0.03);
    const last = s.exchanges.at(-1)!.body as Body;
    expect(last.tool_choice).toBe('none');
    const results = last.messages.filter((msg) => msg.role === 'tool').map((msg) => String(msg.content));
    expect(results.at(-1)).toContain('not sent: the budget ran out');
  });
});

describe('runBatch of mirrorAISDK tasks under total: { maxCostUsd, strict: true, wrapUp: true }', () => {
  it('every run that reaches the cap ends wrapped_up with an answer, and the batch is billed within the cap', async () => {
    const srv = await serve();
    const tasks: FrameworkTask[] = Array.from({ length: 6 }, (_, i) => ({
      id: `run-${i}`,
      input: `Weather in Oslo, run ${i}?`,
      drive: async (mirror) => {
        const m = mirrorAISDK({
          mirror,
          model: modelOf(srv.server, `sk-run-${i}`),
          tools: { weather },
          maxSteps: 1000,
        });
        return generateText({ ...m.settings, prompt: `Weather in Oslo, run ${i}?`, maxOutputTokens: 200 });
      },
    }));
    const cap = 0.08;
    const report = await runBatch(tasks, {
      concurrency: 3,
      total: { maxCostUsd: cap, strict: true, wrapUp: true },
      pricing: localPricing,
      historyDir: dir,
      logger: false,
    });
    expect(srv.server.rejected).toEqual([]);
    // At the server: what the whole batch was billed.
    expect(srv.total).toBeLessThanOrEqual(cap);
    expect(report.totals.costUsd).toBeLessThanOrEqual(cap);
    const ran = report.runs.filter((r) => r.usage.llmCalls > 0);
    // No run can call tools for ever: every run that made a call ended with the model's answer.
    expect(ran.length).toBeGreaterThan(0);
    for (const run of ran) {
      expect(run.outcome).toBe('wrapped_up');
      const history = await loadHistory(run.historyFile!);
      expect(validateHistory(history.entries).issues).toEqual([]);
      expect(history.records.at(-1)!.data).toMatchObject({ outcome: 'wrapped_up', answer: ANSWER });
    }
    // A run refused before its first call (the cap held for the others) made none.
    for (const run of report.runs.filter((r) => r.usage.llmCalls === 0))
      expect(['budget_exceeded', 'skipped']).toContain(run.outcome);
  });
});
