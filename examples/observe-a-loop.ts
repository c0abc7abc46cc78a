// npx tsx examples/observe-a-loop.ts "task" … — needs OPENAI_API_KEY; OPENAI_BASE_URL for another endpoint.
// Your own loop, as it is; the five lines marked `+` add a strict dollar cap, a history file per
// task and crash resume: after a kill, run it again with --resume, and no answered call is sent again.
import * as fs from 'node:fs/promises';
import OpenAI from 'openai';
import { runBatch } from 'agent-state-machine'; // +
import { meteredFetch, observeTask, observeTool } from 'agent-state-machine/openai'; // +

const client = new OpenAI({ fetch: meteredFetch }); // + its requests are gated, bounded from their bodies and charged
const model = process.env.OPENAI_MODEL ?? 'gpt-4o-mini';
const tools: OpenAI.Chat.ChatCompletionTool[] = [
  {
    type: 'function',
    function: {
      name: 'list_files',
      description: 'Lists the files in a folder',
      parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    },
  },
];

async function runAgent(task: string): Promise<string> {
  const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: 'user', content: task }];
  for (;;) {
    const completion = await client.chat.completions.create({ model, messages, tools, max_completion_tokens: 512 });
    const message = completion.choices[0]!.message;
    messages.push(message);
    if (!message.tool_calls?.length) return message.content ?? '';
    for (const call of message.tool_calls) {
      if (call.type !== 'function') continue;
      const { path } = JSON.parse(call.function.arguments) as { path: string };
      // A failed tool is a result the model sees, as in most loops.
      const list = () =>
        fs.readdir(path).then(
          (files) => files.join('\n'),
          (e: Error) => `error: ${e.message}`,
        );
      const output = await observeTool({ id: call.id, name: call.function.name, input: path }, list); // +
      messages.push({ role: 'tool', tool_call_id: call.id, content: output });
    }
  }
}

// USD per million tokens of gpt-4o-mini; a count the response did not report is unknown, never zero.
const pricing = ({ inputTokens: i, outputTokens: o }: { inputTokens?: number; outputTokens?: number }) =>
  i === undefined || o === undefined ? undefined : (i * 0.15 + o * 0.6) / 1e6;

async function main(tasks: string[]): Promise<void> {
  const report = await runBatch(
    tasks.map((task, i) => observeTask(`task-${i + 1}`, task, runAgent)), // +
    {
      historyDir: 'runs',
      resume: process.argv.includes('--resume'),
      total: { maxCostUsd: 0.01 },
      pricing,
      concurrency: 4,
    },
  );
  for (const run of report.runs) console.log(`${run.id}: ${run.outcome}`);
  const { costUsd, uncertainUsd } = report.totals;
  console.log(`$${(costUsd - uncertainUsd).toFixed(6)} billed, $${uncertainUsd.toFixed(6)} uncertain, of $0.01`);
}

const tasks = process.argv.slice(2).filter((arg) => arg !== '--resume');
void main(tasks.length > 0 ? tasks : ['Which files are in the current folder?']);
