// mirrorAISDK with a tool whose execute is an `async function*`: the SDK streams each output it
// yields as a preliminary result and takes the last as the result. Through the mirror the same
// holds, the last output is what the journal keeps, and a resumed run is served it without
// running the tool.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, streamText, tool } from 'ai';
import { z } from 'zod';
import { loadHistory } from 'agent-state-machine/history';
import type { Pricing, RecordedLine } from 'agent-state-machine';
import { mirrorAISDK } from '../../../lib/integrations/ai-sdk';
import { lastOutput, streamedTool } from '../../../lib/integrations/ai-sdk/streamedTool';
import { StepMirror } from '../../../lib/agent/StepMirror';
import type { JournalEntry } from '../../../lib/agent/journal/JournalEntry';
import { startOpenAIChatServer, type OpenAIChatServer } from '../../../examples/servers/openaiChatServer';

const pricing: Pricing = (u) => ((u.inputTokens ?? 0) * 10 + (u.outputTokens ?? 0) * 20) / 1e6;
const usage = { prompt_tokens: 1000, completion_tokens: 500 };

let dir: string;
let server: OpenAIChatServer;
beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-aistreamtool-'));
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

const toolMessage = (body: unknown): unknown =>
  (body as { messages: Array<{ role: string; content: unknown }> }).messages.find((m) => m.role === 'tool')?.content;

/** One run of the weather tool (`kind`: an async generator, or a function returning an async iterable). */
async function weatherRun(options: {
  kind: 'generator' | 'iterable';
  stream: boolean;
  file: string;
  ran: string[];
  resumeFrom?: { journal: readonly RecordedLine[] };
}) {
  async function* outputs(city: string): AsyncGenerator<string> {
    options.ran.push(city);
    yield `checking ${city}`;
    await new Promise((resolve) => setImmediate(resolve));
    yield `sunny in ${city}`;
  }
  const weather =
    options.kind === 'generator'
      ? tool({
          inputSchema: z.object({ city: z.string() }),
          async *execute({ city }) {
            yield* outputs(city);
          },
        })
      : tool({
          inputSchema: z.object({ city: z.string() }),
          execute: (({ city }: { city: string }) => outputs(city)) as unknown as (input: {
            city: string;
          }) => Promise<string>,
        });
  const m = mirrorAISDK({
    model: createOpenAI({ apiKey: 'sk-local', baseURL: server.baseURL }).chat('gpt-4.1'),
    tools: { weather },
    pricing,
    logger: false,
    journal: true,
    historyFile: options.file,
    ...(options.resumeFrom === undefined ? {} : { resumeFrom: options.resumeFrom }),
  });
  const settings = { ...m.settings, prompt: 'Weather in Oslo?' };
  let parts: Array<{ output: unknown; preliminary?: boolean }> = [];
  let results: unknown[];
  if (options.stream) {
    const result = streamText(settings);
    for await (const part of result.fullStream)
      if (part.type === 'tool-result') parts.push({ output: part.output, preliminary: part.preliminary });
    results = (await result.steps)[0]!.toolResults.map((r) => r.output);
  } else {
    const result = await generateText(settings);
    results = result.steps[0]!.toolResults.map((r) => r.output);
    parts = [];
  }
  m.close();
  const tools = (await loadHistory(options.file)).journal.filter((l) => l.type === 'tool');
  return { m, results, parts, tools };
}

describe.each([false, true])('mirrorAISDK, a tool that streams its outputs (streamed call: %s)', (stream) => {
  it('an async generator: its last output is the result the SDK and the journal keep, the others streamed as preliminary', async () => {
    const ran: string[] = [];
    const live = await weatherRun({ kind: 'generator', stream, file: path.join(dir, 'live.jsonl'), ran });
    expect(ran).toEqual(['Oslo']);
    expect(live.results).toEqual(['sunny in Oslo']);
    expect(live.tools).toMatchObject([{ status: 'ok', result: { output: 'sunny in Oslo' } }]);
    expect(toolMessage(server.exchanges[1]!.body)).toBe('sunny in Oslo');
    if (stream)
      expect(live.parts).toEqual([
        { output: 'checking Oslo', preliminary: true },
        { output: 'sunny in Oslo', preliminary: true },
        { output: 'sunny in Oslo', preliminary: undefined },
      ]);

    // Cut off after the tool: the resumed run is served its result, the tool not run again.
    const journal = (await loadHistory(path.join(dir, 'live.jsonl'))).journal as unknown as RecordedLine[];
    const llm = journal.filter((l) => l.type === 'llm');
    const second = server.exchanges[1]!.body;
    server.exchanges.length = 0;
    const resumed = await weatherRun({
      kind: 'generator',
      stream,
      file: path.join(dir, 'resumed.jsonl'),
      ran,
      resumeFrom: { journal: journal.filter((l) => l !== llm[1]) },
    });
    expect(ran).toEqual(['Oslo']);
    expect(resumed.m.mirror.resumed).toMatchObject({ mode: 'recovered', servedTools: 1 });
    expect(resumed.results).toEqual(['sunny in Oslo']);
    expect(server.exchanges.map((e) => e.body)).toEqual([second]);
  });

  it('a function that returns an async iterable: read to its end, its last output the result', async () => {
    const ran: string[] = [];
    const run = await weatherRun({ kind: 'iterable', stream, file: path.join(dir, 'iterable.jsonl'), ran });
    expect(run.results).toEqual(['sunny in Oslo']);
    expect(run.tools).toMatchObject([{ status: 'ok', result: { output: 'sunny in Oslo' } }]);
    expect(toolMessage(server.exchanges[1]!.body)).toBe('sunny in Oslo');
  });
});

describe('streamedTool', () => {
  /** A mirror whose run's response asked for tool call c1: the call comes next. */
  async function atToolCall(): Promise<{ mirror: StepMirror; lines: JournalEntry[] }> {
    const lines: JournalEntry[] = [];
    const mirror = new StepMirror({
      logger: false,
      journal: true,
      sink: { write: () => undefined, journal: (entry: JournalEntry) => void lines.push(entry) },
    });
    mirror.runStart('go');
    expect(await mirror.modelCallStart()).toBeUndefined();
    mirror.modelResponse({
      toolCalls: [{ id: 'c1', name: 'count', input: {} }],
      usage: { inputTokens: 1, outputTokens: 1 },
    });
    return { mirror, lines };
  }

  it('stops the tool at its next output when the SDK stops reading, and records the call as failed', async () => {
    const { mirror, lines } = await atToolCall();
    const closed: string[] = [];
    const tool = {
      async *execute() {
        try {
          for (let i = 1; i <= 5; i++) {
            yield i;
            await new Promise((resolve) => setImmediate(resolve));
          }
        } finally {
          closed.push('closed');
        }
      },
    };
    const outputs = streamedTool(
      { mirror, streaming: undefined } as never,
      'count',
      tool,
      {},
    )({}, { toolCallId: 'c1' });
    expect(await outputs.next()).toEqual({ value: 1, done: false });
    expect(await outputs.return(undefined)).toEqual({ value: undefined, done: true });
    for (let i = 0; i < 5 && closed.length === 0; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(closed).toEqual(['closed']);
    expect(lines.filter((l) => l.type === 'tool')).toMatchObject([
      { status: 'error', result: { isError: true, output: expect.stringContaining('stopped reading') } },
    ]);
  });

  it('leaves a promise of an async iterable as it is, as the SDK does: only one returned as it is is read', async () => {
    const stream = new ReadableStream({ start: (c) => (c.enqueue('a'), c.close()) });
    expect(await lastOutput(Promise.resolve(stream))).toBe(stream);
    expect(
      await lastOutput(
        (async function* () {
          yield 'a';
          yield 'b';
        })(),
      ),
    ).toBe('b');
  });
});
