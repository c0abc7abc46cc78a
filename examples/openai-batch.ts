/**
 * `npm run example:openai-batch`: forty tasks on the `openai` client under one shared dollar
 * cap. A factory makes a fresh `fromOpenAIChat` loop per task (each run its own conversation);
 * the server reports tokens, not dollars, so `createPricing()` prices every response from its
 * tokens and model (gpt-4o-mini's rates, cached input at its own rate). The cap runs out
 * part-way: runs in flight stop as `budget_exceeded`, the rest are `skipped`. Offline: the
 * tasks talk to the local Chat Completions server in examples/servers/.
 */
import OpenAI from 'openai';
import { formatBatchReport, runBatch, type BatchReport, type Sleep } from '../lib/index';
import { fromOpenAIChat } from '../lib/integrations/openai';
import { createPricing } from '../lib/integrations/pricing';
import { startOpenAIChatServer, type ChatAction } from './servers/openaiChatServer';

export interface OpenAIBatchExampleOptions {
  print?: (line: string) => void;
  /** How runs wait (retry backoff). Default: real time. */
  sleep?: Sleep;
}

export const TASKS = 40;
export const TOTAL_CAP_USD = 0.1;
export const CONCURRENCY = 4;

/** Each task: read its file, then answer. Big prompts (20,000 tokens, half of them cached), so money runs out. */
function respond(body: { messages: { role: string; content?: unknown }[] }): ChatAction {
  const usage = { prompt_tokens: 20_000, completion_tokens: 1_000, prompt_tokens_details: { cached_tokens: 10_000 } };
  const answered = body.messages.some((m) => m.role === 'tool');
  const task = String(body.messages.find((m) => m.role === 'user')?.content ?? '').replace(/^Summarize /, '');
  return answered
    ? { content: `${task} holds one function.`, usage }
    : { toolCalls: [{ name: 'read_file', arguments: JSON.stringify({ path: task }) }], usage };
}

export async function runOpenAIBatchExample(
  options: OpenAIBatchExampleOptions = {},
): Promise<{ report: BatchReport; rejected: number }> {
  const print = options.print ?? ((line: string) => process.stdout.write(`${line}\n`));
  const server = await startOpenAIChatServer({ respond });
  const client = new OpenAI({ apiKey: 'sk-local', baseURL: server.baseURL });
  const tools = {
    read_file: {
      description: 'Reads a file',
      parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
      run: (input: { path: string }) => `export function f_${input.path.replace(/\W/g, '_')}() {}`,
    },
  };
  try {
    const report = await runBatch(
      Array.from({ length: TASKS }, (_, i) => {
        const file = `src/module-${String(i + 1).padStart(2, '0')}.ts`;
        return {
          id: `summarize-${i + 1}`,
          input: `Summarize ${file}`,
          agent: () => fromOpenAIChat(client, { model: 'gpt-4o-mini', tools }),
        };
      }),
      {
        concurrency: CONCURRENCY,
        // A plain cap (strict: false): spend may pass it by one response per run in flight.
        total: { maxCostUsd: TOTAL_CAP_USD, strict: false },
        pricing: createPricing(),
        logger: false,
        ...(options.sleep ? { sleep: options.sleep } : {}),
      },
    );
    print(formatBatchReport(report));
    print(`server: ${server.exchanges.length} requests, ${server.rejected.length} rejected`);
    return { report, rejected: server.rejected.length };
  } finally {
    await server.close();
  }
}

if (require.main === module) {
  runOpenAIBatchExample().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
