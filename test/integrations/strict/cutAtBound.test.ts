import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { createOpenAI } from '@ai-sdk/openai';
import { createReactAgent } from '@langchain/langgraph/prebuilt';
import { ChatOpenAI } from '@langchain/openai';
import OpenAI from 'openai';
import { streamText } from 'ai';
import { runBatch, type AgentLoop, type StepMirror } from 'agent-state-machine';
import { fromAnthropic } from '../../../lib/integrations/anthropic';
import { fromAISDK, mirrorAISDK } from '../../../lib/integrations/ai-sdk';
import { LangGraphMirror } from '../../../lib/integrations/langgraph';
import { fromOpenAIChat, fromOpenAIResponses } from '../../../lib/integrations/openai';
import { startAnthropicMessagesServer } from '../../../examples/servers/anthropicMessagesServer';
import {
  billedInput,
  describeMirrorCuts,
  endlessChatServer,
  endlessResponsesServer,
  expectCutInFile,
  ENDLESS,
  MAX,
  pace,
  pricing,
  TOKENS_PER_PIECE,
  USD_PER_TOKEN,
  type MirrorCase,
  type Paced,
} from './fixtures/streamCut';

// The real SDK clients against local servers that ignore max tokens and stream ten times the
// output the request allows, at the pace of a model generating tokens (./fixtures/streamCut).
// The loop (or the mirror on a framework's loop) counts the output as it arrives and cuts the
// request at its bound: what the server bills stays within the hold, the attempt is charged at
// its hold, not retried, and the run ends in error with the fact in its file.

interface Served {
  loop: AgentLoop;
  /** Output tokens the server sent (and bills). */
  billedOutput: () => number;
  billedInput: () => number;
  requests: () => number;
  close: () => Promise<void>;
}

const loops: Record<string, (p: Paced) => Promise<Served>> = {
  'OpenAI Chat': async (p) => {
    const s = await endlessChatServer(p);
    const client = new OpenAI({ apiKey: 'sk-local', baseURL: s.baseURL });
    return { ...s, loop: fromOpenAIChat(client, { model: 'gpt-local', maxTokens: MAX, stream: p.stream }) };
  },
  'OpenAI Responses': async (p) => {
    const s = await endlessResponsesServer(p);
    const client = new OpenAI({ apiKey: 'sk-local', baseURL: s.baseURL });
    return { ...s, loop: fromOpenAIResponses(client, { model: 'gpt-local', maxTokens: MAX, stream: p.stream }) };
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
    const s = await endlessChatServer(p);
    const model = createOpenAI({ apiKey: 'sk-local', baseURL: s.baseURL }).chat('gpt-local');
    return { ...s, loop: fromAISDK({ model, callSettings: { maxOutputTokens: MAX }, stream: p.stream }) };
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
      expectCutInFile(run!.historyFile!);
    } finally {
      await served.close();
    }
  });
});

/**
 * LangChain's ChatOpenAI, streaming, bounded at `MAX`, in a ReAct agent: invoked (the handler's
 * token callback cuts it), or streamed as LangGraph's v3 events (its stream event callback does).
 * `wrapped`: the mirror observes only the model and tools it wrapped (`observe: 'wrapped'`), its
 * handler the model's own callback, none on the graph's; `wrapped, streamEvents v3` streams the
 * graph's v3 events inside `lg.run()` (which invokes what it is given), as wrapped mode requires.
 */
async function reactAgentRun(
  mirror: StepMirror,
  baseURL: string,
  p: Paced,
  how: 'invoke' | 'wrapModel' | 'streamEvents v3' | 'wrapped' | 'wrapped, streamEvents v3',
): Promise<unknown> {
  const wrapped = how.startsWith('wrapped');
  const lg = new LangGraphMirror({ mirror, observe: wrapped ? 'wrapped' : 'graph' });
  const llm = new ChatOpenAI({
    model: 'gpt-local',
    apiKey: 'sk-local',
    configuration: { baseURL },
    maxRetries: 0,
    streaming: true,
    maxTokens: MAX,
  });
  const agent = wrapped
    ? createReactAgent({ llm: lg.wrapModel(llm), tools: lg.wrapTools([]) })
    : createReactAgent({ llm: how === 'wrapModel' ? lg.wrapModel(llm) : llm, tools: [] });
  const input = { messages: [{ role: 'user', content: 'Say tok, forever' }] };
  // The test reads the text as a UI would, through its own handler.
  const reader = {
    handleLLMNewToken: () => p.stream.onText(),
    handleChatModelStreamEvent: (e: { event?: string }) =>
      void (e.event === 'content-block-delta' && p.stream.onText()),
  };
  try {
    if (how === 'wrapped, streamEvents v3') {
      const streamed = {
        invoke: async (i: typeof input, config?: Record<string, unknown>) => {
          for await (const _ of await agent.streamEvents(i, { ...config, version: 'v3' })) void _;
        },
      };
      await lg.run(streamed, input, { callbacks: [reader] });
    } else if (how !== 'streamEvents v3') await lg.run(agent, input, { callbacks: [reader] });
    else {
      const events = await agent.streamEvents(input, { version: 'v3', callbacks: [lg, reader], signal: lg.signal });
      for await (const _ of events) void _;
    }
  } catch (error) {
    return error;
  }
  return undefined;
}

const mirrors: Record<string, MirrorCase> = {
  'mirrorAISDK (streamText)': {
    server: endlessChatServer,
    drive: async (mirror, baseURL, p) => {
      const m = mirrorAISDK({ mirror, model: createOpenAI({ apiKey: 'sk-local', baseURL }).chat('gpt-local') });
      const result = streamText({ ...m.settings, maxOutputTokens: MAX, prompt: 'Say tok, forever' });
      let streamError: unknown;
      try {
        for await (const part of result.fullStream) {
          if (part.type === 'text-delta') p.stream.onText();
          else if (part.type === 'error') streamError = part.error;
        }
      } catch (error) {
        streamError = error;
      }
      return streamError;
    },
  },
  'LangGraphMirror (ChatOpenAI streaming, createReactAgent)': {
    server: endlessChatServer,
    drive: (mirror, baseURL, p) => reactAgentRun(mirror, baseURL, p, 'invoke'),
  },
  'LangGraphMirror with wrapModel (ChatOpenAI streaming, createReactAgent)': {
    server: endlessChatServer,
    drive: (mirror, baseURL, p) => reactAgentRun(mirror, baseURL, p, 'wrapModel'),
  },
  'LangGraphMirror on streamEvents v3 (ChatOpenAI streaming, createReactAgent)': {
    server: endlessChatServer,
    drive: (mirror, baseURL, p) => reactAgentRun(mirror, baseURL, p, 'streamEvents v3'),
  },
  "LangGraphMirror observing 'wrapped' (ChatOpenAI streaming, createReactAgent)": {
    server: endlessChatServer,
    drive: (mirror, baseURL, p) => reactAgentRun(mirror, baseURL, p, 'wrapped'),
  },
  "LangGraphMirror observing 'wrapped' on streamEvents v3 inside run() (ChatOpenAI streaming, createReactAgent)": {
    server: endlessChatServer,
    drive: (mirror, baseURL, p) => reactAgentRun(mirror, baseURL, p, 'wrapped, streamEvents v3'),
  },
};

describe('the mirrors on frameworks', () => {
  // LangChain logs the error a handler raises (the cut) before raising it.
  beforeEach(() => jest.spyOn(console, 'error').mockImplementation(() => undefined));
  afterEach(() => jest.restoreAllMocks());
  describeMirrorCuts(mirrors);
});
