// Providers compress their answers (`content-encoding: gzip`), and fetch decodes them: the
// metered fetch reads the decoded answer, charges it, and hands the SDK the same decoded body
// without the encoding and length that described the compressed one.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import OpenAI from 'openai';
import { observeLoop } from 'agent-state-machine';
import { meteredFetch } from '../../lib/integrations/openai';
import { localPricing, USD_PER_TOKEN } from '../helpers/localPricing';

const TEXT = 'compressed answer '.repeat(50);
const USAGE = { prompt_tokens: 30, completion_tokens: 300, total_tokens: 330 };

function completion(): object {
  return {
    id: 'chatcmpl-gz',
    object: 'chat.completion',
    created: 0,
    model: 'gpt-local',
    choices: [{ index: 0, message: { role: 'assistant', content: TEXT, refusal: null }, finish_reason: 'stop' }],
    usage: USAGE,
  };
}

function chunks(): string {
  const base = { id: 'chatcmpl-gz', object: 'chat.completion.chunk', created: 0, model: 'gpt-local' };
  const events = [
    ...TEXT.match(/.{1,18}/g)!.map((content) => ({
      ...base,
      choices: [{ index: 0, delta: { content }, finish_reason: null }],
    })),
    { ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
    { ...base, choices: [], usage: USAGE },
  ];
  return `${events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join('')}data: [DONE]\n\n`;
}

let server: Server;
let baseURL: string;
beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const streamed = (JSON.parse(body) as { stream?: boolean }).stream === true;
      const zipped = gzipSync(streamed ? chunks() : JSON.stringify(completion()));
      res.writeHead(200, {
        'content-type': streamed ? 'text/event-stream' : 'application/json',
        'content-encoding': 'gzip',
        'content-length': String(zipped.length),
        'x-request-id': 'req_gz',
      });
      res.end(zipped);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const client = (): OpenAI => new OpenAI({ baseURL, apiKey: 'sk-local', fetch: meteredFetch });
const request = {
  model: 'gpt-local',
  messages: [{ role: 'user' as const, content: 'go' }],
  max_completion_tokens: 1000,
};
const billedUsd = (USAGE.prompt_tokens + USAGE.completion_tokens) * USD_PER_TOKEN;

test('a gzip JSON answer is read, charged as billed, and handed on decoded', async () => {
  let headers: Headers | undefined;
  const { value: output, result } = await observeLoop(
    { budget: { maxCostUsd: 1 }, pricing: localPricing, logger: false },
    'go',
    async () => {
      const { data, response } = await client().chat.completions.create(request).withResponse();
      headers = response.headers;
      return data.choices[0]!.message.content;
    },
  );
  expect(output).toBe(TEXT);
  expect(result.outcome).toBe('end_of_turn');
  expect([result.usage.inputTokens, result.usage.outputTokens]).toEqual([30, 300]);
  expect(result.usage.costUsd).toBeCloseTo(billedUsd, 12);
  expect(result.usage.uncertainUsd).toBe(0);
  expect(headers?.get('content-encoding')).toBeNull();
  expect(headers?.get('content-length')).toBeNull();
  expect(headers?.get('x-request-id')).toBe('req_gz');
});

test('a gzip streamed answer is folded, charged as billed, and handed on decoded', async () => {
  const { value: output, result } = await observeLoop(
    { budget: { maxCostUsd: 1 }, pricing: localPricing, logger: false },
    'go',
    async () => {
      const stream = await client().chat.completions.create({
        ...request,
        stream: true,
        stream_options: { include_usage: true },
      });
      let text = '';
      for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
      return text;
    },
  );
  expect(result.error?.message).toBeUndefined();
  expect(output).toBe(TEXT);
  expect(result.outcome).toBe('end_of_turn');
  expect([result.usage.inputTokens, result.usage.outputTokens]).toEqual([30, 300]);
  expect(result.usage.costUsd).toBeCloseTo(billedUsd, 12);
  expect(result.usage.uncertainUsd).toBe(0);
});
