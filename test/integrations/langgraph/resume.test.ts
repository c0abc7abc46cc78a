// LangGraphMirror given `resumeFrom`: a ReAct agent on LangChain's ChatOpenAI, cut off after its
// first model call and its tool, goes on from its journal. The wrapped model answers the
// recorded call with no request and the wrapped tool the recorded result with no run (or runs
// again, by the policy); then the graph goes live with the request the cut-off run would have
// sent next. Without the wrappers a callback handler cannot answer for the model: the run starts
// its calls again. The resumed run is served whether the mirror rides the graph's callbacks
// (observe 'graph') or hears only the model and tools it wrapped (observe 'wrapped').
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { tool } from '@langchain/core/tools';
import { createReactAgent } from '@langchain/langgraph/prebuilt';
import { ChatOpenAI } from '@langchain/openai';
import { z } from 'zod';
import type { RecordedLine } from 'agent-state-machine';
import { JsonlHistorySink, loadHistory, validateHistory } from 'agent-state-machine/history';
import { LangGraphMirror, type LangGraphObserve } from '../../../lib/integrations/langgraph';
import { startOpenAIChatServer, type OpenAIChatServer } from '../../../examples/servers/openaiChatServer';

const pricing = (u: { inputTokens?: number; outputTokens?: number }): number =>
  ((u.inputTokens ?? 0) * 10 + (u.outputTokens ?? 0) * 20) / 1e6;
const usage = { prompt_tokens: 1000, completion_tokens: 500 }; // $0.02

let dir: string;
let server: OpenAIChatServer;
beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-lgresume-'));
  server = await startOpenAIChatServer({
    respond: (body: { messages: { role: string }[] }) =>
      body.messages.some((m) => m.role === 'tool')
        ? { content: 'Sunny in Oslo.', usage }
        : { toolCalls: [{ id: 'call_1', name: 'weather', arguments: '{"city":"Oslo"}' }], usage },
  });
});
afterEach(async () => {
  await server.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function run(
  file: string,
  calls: { n: number },
  options: { resumeFrom?: object; resumeTools?: object; wrap?: boolean; observe?: LangGraphObserve; v3?: boolean } = {},
): Promise<{ lg: LangGraphMirror; text: unknown }> {
  const weather = tool(async ({ city }: { city: string }) => (calls.n++, `sunny in ${city}`), {
    name: 'weather',
    description: 'The weather in a city',
    schema: z.object({ city: z.string() }),
  });
  const sink = JsonlHistorySink.open(file, { runId: 'r' });
  const lg = new LangGraphMirror({
    sink,
    journal: true,
    pricing,
    logger: false,
    ...(options.observe === undefined ? {} : { observe: options.observe }),
    ...(options.resumeFrom === undefined ? {} : { resumeFrom: options.resumeFrom as never }),
    ...(options.resumeTools === undefined ? {} : { resumeTools: options.resumeTools as never }),
  });
  const llm = new ChatOpenAI({
    model: 'gpt-4o-mini',
    apiKey: 'test-key',
    configuration: { baseURL: server.baseURL },
    maxRetries: 0,
  });
  const wrap = options.wrap !== false;
  const agent = createReactAgent({
    llm: wrap ? lg.wrapModel(llm) : llm,
    tools: wrap ? lg.wrapTools([weather]) : [weather],
  });
  const input = { messages: [{ role: 'user', content: 'Weather in Oslo?' }] };
  // Streamed as LangGraph's v3 events, through run() (which invokes what it is given): LangChain
  // then calls the chat model's `_streamChatModelEvents`, with no run to tell its calls apart by.
  const graph = options.v3
    ? {
        invoke: async (i: typeof input, config?: Record<string, unknown>) => {
          let text: unknown;
          for await (const event of await agent.streamEvents(i, { ...config, version: 'v3' }))
            if ((event as { method?: string }).method === 'values')
              text = (
                event as { params?: { data?: { messages?: { content: unknown }[] } } }
              ).params?.data?.messages?.at(-1)?.content;
          return { messages: [{ content: text }] };
        },
      }
    : agent;
  const out = await lg.run(graph, input);
  sink.close();
  return { lg, text: out.messages.at(-1)?.content };
}

/** The first run's journal as a kill after its tool would have left it: the second response is missing. */
async function cutOff(
  calls: { n: number },
  observe?: LangGraphObserve,
): Promise<{ journal: RecordedLine[]; second: unknown }> {
  const first = path.join(dir, 'first.jsonl');
  await run(first, calls, observe === undefined ? {} : { observe });
  const journal = [...(await loadHistory(first)).journal] as unknown as RecordedLine[];
  const llmLines = journal.filter((l) => l.type === 'llm');
  expect(llmLines).toHaveLength(2);
  const second = server.exchanges[1]!.body;
  server.exchanges.length = 0;
  return { journal: journal.filter((l) => l !== llmLines[1]), second };
}

describe.each<LangGraphObserve>(['graph', 'wrapped'])(
  "LangGraphMirror (observe '%s') resumed from a cut-off run",
  (observe) => {
    it('serves the recorded response and tool result with no request, then sends the request the run would have sent', async () => {
      const calls = { n: 0 };
      const { journal, second } = await cutOff(calls, observe);
      expect(calls.n).toBe(1);
      const file = path.join(dir, 'resumed.jsonl');
      const { lg, text } = await run(file, calls, {
        observe,
        resumeFrom: { journal, usage: { llmCalls: 1, toolCalls: 1, costUsd: 0.02 } },
      });
      expect(lg.observe).toBe(observe);
      expect(text).toBe('Sunny in Oslo.');
      // One request, the second one, as the cut-off run would have sent it.
      expect(server.exchanges.map((e) => e.body)).toEqual([second]);
      expect(server.rejected).toEqual([]);
      // The tool did not run again: its recorded result was served.
      expect(calls.n).toBe(1);
      expect(lg.mirror.resumed).toMatchObject({ mode: 'recovered', recordedCalls: 1, servedTools: 1 });
      // Both attempts' spend, the served call counted once.
      expect(lg.usage).toMatchObject({ llmCalls: 2, toolCalls: 1 });
      expect(lg.usage.costUsd).toBeCloseTo(0.04, 10);
      const history = await loadHistory(file);
      expect(validateHistory(history.entries).issues).toEqual([]);
      const served = history.journal.filter((l) => (l as { fromJournal?: boolean }).fromJournal === true);
      expect(served.map((l) => l.type)).toEqual(['llm', 'tool']);
    });
  },
);

describe.each<LangGraphObserve>(['graph', 'wrapped'])(
  "LangGraphMirror (observe '%s') resumed on LangGraph's streamEvents v3",
  (observe) => {
    it('serves the recorded response with no request: the one request is the one the cut-off run would have sent next', async () => {
      const calls = { n: 0 };
      const { journal } = await cutOff(calls, observe);
      const { lg } = await run(path.join(dir, 'v3.jsonl'), calls, {
        observe,
        v3: true,
        resumeFrom: { journal, usage: { llmCalls: 1, toolCalls: 1, costUsd: 0.02 } },
      });
      expect(server.exchanges).toHaveLength(1);
      expect(JSON.stringify(server.exchanges[0]!.body)).toContain('sunny in Oslo');
      expect(calls.n).toBe(1);
      expect(lg.mirror.resumed).toMatchObject({ mode: 'recovered', recordedCalls: 1, servedTools: 1 });
      // Every request that left is charged: the live one, and the cut-off run's two.
      expect(lg.usage).toMatchObject({ llmCalls: 2, toolCalls: 1 });
      expect(lg.usage.costUsd).toBeCloseTo(0.04, 10);
      expect(lg.result).toMatchObject({ outcome: 'end_of_turn' });
    });
  },
);

describe('LangGraphMirror resumed, by the tool policy and without the wrappers', () => {
  it.each<LangGraphObserve>(['graph', 'wrapped'])(
    "under the tool policy 'rerun' the tool runs again, and the recorded response is still served (observe '%s')",
    async (observe) => {
      const calls = { n: 0 };
      const { journal } = await cutOff(calls, observe);
      const { lg } = await run(path.join(dir, 'rerun.jsonl'), calls, {
        observe,
        resumeFrom: { journal },
        resumeTools: { rerun: ['weather'] },
      });
      expect(calls.n).toBe(2);
      expect(server.exchanges).toHaveLength(1);
      expect(lg.mirror.resumed).toMatchObject({ mode: 'recovered', recordedCalls: 1, rerunTools: 1 });
    },
  );

  it('without wrapModel the graph makes every call again, and the earlier spend is still counted', async () => {
    const calls = { n: 0 };
    const { journal } = await cutOff(calls);
    const { lg } = await run(path.join(dir, 'unwrapped.jsonl'), calls, {
      wrap: false,
      resumeFrom: { journal, usage: { llmCalls: 1, toolCalls: 1, costUsd: 0.02 } },
    });
    expect(server.exchanges).toHaveLength(2);
    expect(calls.n).toBe(2);
    expect(lg.mirror.resumed?.recordedCalls).toBe(0);
    expect(lg.usage.costUsd).toBeCloseTo(0.06, 10);
  });

  it('refuses what it cannot wrap, naming it', () => {
    const lg = new LangGraphMirror({ logger: false });
    expect(() => lg.wrapModel('gpt-4o-mini')).toThrow(/`model`.*LangChain chat model/);
    expect(() => lg.wrapTools([{ name: 'x' }])).toThrow(/`tools\[0\]`.*LangChain tool/);
  });
});
