// mirrorAISDK given `resumeFrom`: a run cut off after its first model call and its tool goes on
// from its journal — the recorded response is handed to the real @ai-sdk/openai loop with no
// request, the recorded tool result with no tool run (or the tool run again, by the policy) —
// and then goes live with the very request the cut-off run would have sent next.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, streamText, tool } from 'ai';
import { z } from 'zod';
import { loadHistory, validateHistory } from 'agent-state-machine/history';
import { type Pricing, type RecordedLine } from 'agent-state-machine';
import { mirrorAISDK } from '../../../lib/integrations/ai-sdk';
import { startOpenAIChatServer, type OpenAIChatServer } from '../../../examples/servers/openaiChatServer';

const pricing: Pricing = (u) => ((u.inputTokens ?? 0) * 10 + (u.outputTokens ?? 0) * 20) / 1e6;
const usage = { prompt_tokens: 1000, completion_tokens: 500 }; // $0.02

let dir: string;
let server: OpenAIChatServer | undefined;
beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-airesume-'))));
afterEach(async () => {
  await server?.close();
  server = undefined;
  fs.rmSync(dir, { recursive: true, force: true });
});

async function llm(): Promise<OpenAIChatServer> {
  server = await startOpenAIChatServer({
    respond: (body: { messages: { role: string }[] }) =>
      body.messages.some((m) => m.role === 'tool')
        ? { content: 'Sunny in Oslo.', usage }
        : { toolCalls: [{ id: 'call_1', name: 'weather', arguments: '{"city":"Oslo"}' }], usage },
  });
  return server;
}

describe.each([false, true])('mirrorAISDK resumed from a cut-off run (streamed: %s)', (stream) => {
  const run = async (
    options: { resumeFrom?: object; resumeTools?: object; file: string; value?: boolean },
    calls: { n: number; seen?: unknown[] },
  ) => {
    const s = server!;
    // A tool that returns text, or (`value`) an object the SDK hands its `toModelOutput`.
    const weather = options.value
      ? tool({
          inputSchema: z.object({ city: z.string() }),
          execute: async ({ city }) => (calls.n++, { city, sky: 'sunny', celsius: 12 }),
          toModelOutput: ({ output }) => {
            calls.seen?.push(output);
            return { type: 'text', value: `${output.sky}, ${output.celsius} °C in ${output.city}` };
          },
        })
      : tool({
          inputSchema: z.object({ city: z.string() }),
          execute: async ({ city }) => (calls.n++, `sunny in ${city}`),
        });
    const model = createOpenAI({ apiKey: 'sk-local', baseURL: s.baseURL }).chat('gpt-4.1');
    const m = mirrorAISDK({
      model,
      tools: { weather },
      pricing,
      logger: false,
      journal: true,
      historyFile: options.file,
      ...(options.resumeFrom === undefined ? {} : { resumeFrom: options.resumeFrom as never }),
      ...(options.resumeTools === undefined ? {} : { resumeTools: options.resumeTools as never }),
    });
    const text = stream
      ? await streamText({ ...m.settings, prompt: 'Weather in Oslo?' }).text
      : (await generateText({ ...m.settings, prompt: 'Weather in Oslo?' })).text;
    m.close();
    return { m, text };
  };

  /** The first run's journal as a kill after its tool would have left it: the second response is missing. */
  async function cutOff(
    calls: { n: number; seen?: unknown[] },
    value = false,
  ): Promise<{ journal: RecordedLine[]; second: unknown }> {
    const s = await llm();
    const first = path.join(dir, 'first.jsonl');
    await run({ file: first, value }, calls);
    const journal = [...(await loadHistory(first)).journal] as unknown as RecordedLine[];
    const llmLines = journal.filter((l) => l.type === 'llm');
    expect(llmLines).toHaveLength(2);
    const second = s.exchanges[1]!.body;
    s.exchanges.length = 0;
    return { journal: journal.filter((l) => l !== llmLines[1]), second };
  }

  it('serves the recorded response and tool result with no request, then sends the request the run would have sent', async () => {
    const calls = { n: 0 };
    const { journal, second } = await cutOff(calls);
    expect(calls.n).toBe(1);
    const file = path.join(dir, 'resumed.jsonl');
    const { m, text } = await run(
      { file, resumeFrom: { journal, usage: { llmCalls: 1, toolCalls: 1, costUsd: 0.02 } } },
      calls,
    );
    expect(text).toBe('Sunny in Oslo.');
    // One request, the second one, byte for byte as the cut-off run would have sent it.
    expect(server!.exchanges.map((e) => e.body)).toEqual([second]);
    expect(server!.rejected).toEqual([]);
    // The tool was not run again: its recorded result was served.
    expect(calls.n).toBe(1);
    expect(m.mirror.resumed).toMatchObject({ mode: 'recovered', recordedCalls: 1, servedTools: 1 });
    // Both attempts' spend, the served call counted once.
    expect(m.mirror.usage).toMatchObject({ llmCalls: 2, toolCalls: 1 });
    expect(m.mirror.usage.costUsd).toBeCloseTo(0.04, 10);
    const history = await loadHistory(file);
    expect(validateHistory(history.entries).issues).toEqual([]);
    const served = history.journal.filter((l) => (l as { fromJournal?: boolean }).fromJournal === true);
    expect(served.map((l) => l.type)).toEqual(['llm', 'tool']);
  });

  it('serves a tool result that was a value as the value: toModelOutput gets the object, and the request is the one the run would have sent', async () => {
    const calls = { n: 0, seen: [] as unknown[] };
    const { journal, second } = await cutOff(calls, true);
    const tool = journal.find((l) => l.type === 'tool') as unknown as { json?: boolean; result: { output: string } };
    expect(tool).toMatchObject({ json: true, result: { output: '{"city":"Oslo","sky":"sunny","celsius":12}' } });
    const file = path.join(dir, 'value.jsonl');
    const live = calls.seen.splice(0);
    const { m } = await run({ file, value: true, resumeFrom: { journal } }, calls);
    expect(calls.n).toBe(1);
    expect(m.mirror.resumed).toMatchObject({ mode: 'recovered', servedTools: 1 });
    // The live run's toModelOutput got the object (streamText asks it more than once); the
    // resumed run's gets it again, as often, not its text.
    const value = { city: 'Oslo', sky: 'sunny', celsius: 12 };
    expect(live.length).toBeGreaterThan(0);
    expect(live).toEqual(live.map(() => value));
    expect(calls.seen).toEqual(live);
    expect(server!.exchanges.map((e) => e.body)).toEqual([second]);
    // Served again, the line still says it was a value: a run resumed from this one is served it too.
    const served = (await loadHistory(file)).journal.find((l) => l.type === 'tool') as unknown as { json?: boolean };
    expect(served).toMatchObject({ json: true, fromJournal: true });
  });

  it("under the tool policy 'rerun' the tool runs again; a call that differs from the recorded one goes live", async () => {
    const calls = { n: 0 };
    const { journal } = await cutOff(calls);
    const file = path.join(dir, 'rerun.jsonl');
    const { m } = await run({ file, resumeFrom: { journal }, resumeTools: { rerun: ['weather'] } }, calls);
    expect(calls.n).toBe(2);
    expect(server!.exchanges).toHaveLength(1);
    expect(m.mirror.resumed).toMatchObject({ mode: 'recovered', recordedCalls: 1, rerunTools: 1 });

    // Another user message: the journal's response does not apply, and the call is made.
    const edited = journal.map((l) =>
      l.type === 'llm' ? { ...l, input: { kind: 'user_message', message: 'Weather in Bergen?' } } : l,
    );
    const again = await run({ file: path.join(dir, 'diverged.jsonl'), resumeFrom: { journal: edited } }, calls);
    expect(server!.exchanges).toHaveLength(3);
    expect(again.m.mirror.resumed).toMatchObject({ recordedCalls: 0 });
    expect(again.m.mirror.resumed?.diverged).toContain('the user message differs');
  });
});
