import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { createOpenAI } from '@ai-sdk/openai';
import OpenAI from 'openai';
import { streamText } from 'ai';
import { runBatch, StreamCutError, type AgentLoop, type Pricing } from 'agent-state-machine';
import { fromAnthropic } from '../../../lib/integrations/anthropic';
import { fromAISDK, mirrorAISDK } from '../../../lib/integrations/ai-sdk';
import { fromOpenAIChat, fromOpenAIResponses } from '../../../lib/integrations/openai';
import { startAnthropicMessagesServer } from '../../../examples/servers/anthropicMessagesServer';
import { startOpenAIChatServer } from '../../../examples/servers/openaiChatServer';
import { startOpenAIResponsesServer } from '../../../examples/servers/openaiResponsesServer';

// The real SDK clients against local servers that ignore max tokens and stream ten times the
// output the request allows, one 8-character piece (2 tokens, as the servers count) at a time,
// each made only once the client has read the one before (the pace of a model generating
// tokens: it stops when the client goes away). The loop counts the output as it arrives and
// cuts the request at its bound: what the server bills stays within the hold, the attempt is
// charged at its hold, not retried, and the run ends in error with the fact in its file.

const USD_PER_TOKEN = 5e-6;
const pricing: Pricing = (u) => ((u.inputTokens ?? 0) + (u.outputTokens ?? 0)) * USD_PER_TOKEN;
const MAX = 100;
const TOKENS_PER_PIECE = 2;
// Ten times the bound, in 8-character pieces: "tok tok " is two tokens at the servers' 4 characters a token.
const ENDLESS = 'tok tok '.repeat((10 * MAX) / TOKENS_PER_PIECE);
const billedInput = (body: unknown): number => Math.ceil(JSON.stringify(body).length / 4);

/** The model's pace: a piece of text is made only once the client has read every piece sent before it. */
function pace() {
  let read = 0;
  let sent = 0;
  let wake: (() => void) | undefined;
  return {
    stream: { onText: () => (read++, wake?.()) },
    get sent() {
      return sent;
    },
    /** Awaited before event `index`; `isText`: it carries a piece of text. */
    async before(isText: boolean, closed: AbortSignal): Promise<void> {
      while (read < sent && !closed.aborted)
        await new Promise<void>((resolve) => {
          const done = (): void => {
            closed.removeEventListener('abort', done);
            resolve();
          };
          wake = done;
          closed.addEventListener('abort', done, { once: true });
        });
      if (isText && !closed.aborted) sent++;
    },
  };
}

interface Served {
  loop: AgentLoop;
  /** Output tokens the server sent (and bills). */
  billedOutput: () => number;
  billedInput: () => number;
  requests: () => number;
  close: () => Promise<void>;
}

type Paced = ReturnType<typeof pace>;

const loops: Record<string, (p: Paced) => Promise<Served>> = {
  'OpenAI Chat': async (p) => {
    let input = 0;
    const s = await startOpenAIChatServer({
      ignoresMaxTokens: true,
      respond: (body) => {
        input += billedInput(body);
        // Chunk 0 is the role; the text follows, piece by piece.
        return { content: ENDLESS, beforeChunk: (i, closed) => p.before(i >= 1, closed) };
      },
    });
    const client = new OpenAI({ apiKey: 'sk-local', baseURL: s.baseURL });
    return {
      loop: fromOpenAIChat(client, { model: 'gpt-local', maxTokens: MAX, stream: p.stream }),
      billedOutput: () => p.sent * TOKENS_PER_PIECE,
      billedInput: () => input,
      requests: () => s.exchanges.length,
      close: () => s.close(),
    };
  },
  'OpenAI Responses': async (p) => {
    let input = 0;
    const s = await startOpenAIResponsesServer({
      respond: (body) => {
        input += billedInput(body);
        return { text: ENDLESS, beforeEvent: (i, closed) => p.before(i >= 4, closed) };
      },
    });
    const client = new OpenAI({ apiKey: 'sk-local', baseURL: s.baseURL });
    return {
      loop: fromOpenAIResponses(client, { model: 'gpt-local', maxTokens: MAX, stream: p.stream }),
      billedOutput: () => p.sent * TOKENS_PER_PIECE,
      billedInput: () => input,
      requests: () => s.exchanges.length,
      close: () => s.close(),
    };
  },
  Anthropic: async (p) => {
    let input = 0;
    const s = await startAnthropicMessagesServer({
      respond: (body) => {
        input += billedInput(body);
        // message_start, ping, content_block_start, then the text piece by piece.
        return { text: ENDLESS, beforeEvent: (i, closed) => p.before(i >= 3, closed) };
      },
    });
    const client = new Anthropic({ apiKey: 'sk-local', baseURL: s.baseURL });
    return {
      loop: fromAnthropic(client, { model: 'claude-local', maxTokens: MAX, stream: p.stream }),
      billedOutput: () => p.sent * TOKENS_PER_PIECE,
      billedInput: () => input,
      requests: () => s.exchanges.length,
      close: () => s.close(),
    };
  },
  'AI SDK (streamText)': async (p) => {
    let input = 0;
    const s = await startOpenAIChatServer({
      ignoresMaxTokens: true,
      respond: (body) => {
        input += billedInput(body);
        return { content: ENDLESS, beforeChunk: (i, closed) => p.before(i >= 1, closed) };
      },
    });
    const model = createOpenAI({ apiKey: 'sk-local', baseURL: s.baseURL }).chat('gpt-local');
    return {
      loop: fromAISDK({ model, callSettings: { maxOutputTokens: MAX }, stream: p.stream }),
      billedOutput: () => p.sent * TOKENS_PER_PIECE,
      billedInput: () => input,
      requests: () => s.exchanges.length,
      close: () => s.close(),
    };
  },
};

let dir: string;
beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-cut-at-bound-'))));
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe.each(Object.keys(loops))('%s, streaming from a server that ignores max tokens', (name) => {
  it('cuts the request at its bound: billed within the hold, charged at the hold, not retried, the fact in the file', async () => {
    const p = pace();
    const served = await loops[name]!(p);
    try {
      const report = await runBatch([{ id: 'only', input: 'Say tok, forever', agent: () => served.loop }], {
        logger: false,
        pricing,
        historyDir: dir,
        total: { maxCostUsd: 1 },
        retry: { retries: 3, shouldRetry: () => true },
        sleep: async () => undefined,
      });
      const [run] = report.runs;
      // One request, cut: a retry would only be cut again.
      expect(served.requests()).toBe(1);
      expect(run!.outcome).toBe('error');
      expect(run!.error!.message).toMatch(
        /the response stream was cut at its bound: \d+ output tokens counted, its max 100; the server does not stop at max tokens/,
      );
      // What the server sent (and bills) stays within the request's bound, so within its hold.
      expect(served.billedOutput()).toBeGreaterThan(0);
      expect(served.billedOutput()).toBeLessThanOrEqual(MAX);
      const billedUsd = (served.billedInput() + served.billedOutput()) * USD_PER_TOKEN;
      // Charged its whole hold: the request left, and its usage never came back.
      expect(report.totals.costUsd).toBeGreaterThanOrEqual(billedUsd);
      expect(report.totals.costUsd).toBeGreaterThanOrEqual(MAX * USD_PER_TOKEN);

      const lines = fs.readFileSync(run!.historyFile!, 'utf8').split('\n');
      const withFact = lines.filter((l) => l.includes('"cutAtBound":{"countedTokens":'));
      // The attempt's journal line (charged at its hold) and the record that ends the run.
      expect(withFact).toHaveLength(2);
      expect(withFact[0]).toContain('"type":"llm"');
      expect(withFact[0]).toContain('"chargedAtHold":');
      expect(withFact[1]).toContain('"outcome":"error"');
    } finally {
      await served.close();
    }
  });
});

describe('mirrorAISDK (streamText), streaming from a server that ignores max tokens', () => {
  it('cuts the request at its bound: billed within the hold, charged at the hold, not retried, the fact in the file', async () => {
    const p = pace();
    let input = 0;
    const s = await startOpenAIChatServer({
      ignoresMaxTokens: true,
      respond: (body) => {
        input += billedInput(body);
        return { content: ENDLESS, beforeChunk: (i, closed) => p.before(i >= 1, closed) };
      },
    });
    try {
      const model = createOpenAI({ apiKey: 'sk-local', baseURL: s.baseURL }).chat('gpt-local');
      let streamError: unknown;
      const report = await runBatch(
        [
          {
            id: 'only',
            run: async (mirror) => {
              const m = mirrorAISDK({ mirror, model });
              const result = streamText({ ...m.settings, maxOutputTokens: MAX, prompt: 'Say tok, forever' });
              try {
                for await (const part of result.fullStream) {
                  if (part.type === 'text-delta') p.stream.onText();
                  else if (part.type === 'error') streamError = part.error;
                }
              } catch (error) {
                streamError = error;
              }
            },
          },
        ],
        { logger: false, pricing, historyDir: dir, total: { maxCostUsd: 1 } },
      );
      const [run] = report.runs;
      // One request, cut: the SDK is not let to try it again.
      expect(s.exchanges).toHaveLength(1);
      expect(streamError).toBeInstanceOf(StreamCutError);
      expect(run!.outcome).toBe('error');
      expect(run!.error!.message).toMatch(
        /the response stream was cut at its bound: \d+ output tokens counted, its max 100/,
      );
      // What the server sent (and bills) stays within the request's bound, so within its hold.
      const billedOutput = p.sent * TOKENS_PER_PIECE;
      expect(billedOutput).toBeGreaterThan(0);
      expect(billedOutput).toBeLessThanOrEqual(MAX);
      // Charged its whole hold: the request left, and its usage never came back.
      expect(report.totals.costUsd).toBeGreaterThanOrEqual((input + billedOutput) * USD_PER_TOKEN);
      expect(report.totals.costUsd).toBeGreaterThanOrEqual(MAX * USD_PER_TOKEN);
      const lines = fs.readFileSync(run!.historyFile!, 'utf8').split('\n');
      const withFact = lines.filter((l) => l.includes('"cutAtBound":{"countedTokens":'));
      // The attempt's journal line (charged at its hold) and the record that ends the run.
      expect(withFact).toHaveLength(2);
      expect(withFact[0]).toContain('"type":"llm"');
      expect(withFact[0]).toContain('"chargedAtHold":');
      expect(withFact[1]).toContain('"outcome":"error"');
    } finally {
      await s.close();
    }
  });
});
