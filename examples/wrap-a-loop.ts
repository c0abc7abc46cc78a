// npx tsx examples/wrap-a-loop.ts — needs OPENAI_API_KEY; OPENAI_BASE_URL for another endpoint.
import * as fs from 'node:fs/promises';
import OpenAI from 'openai';
import { AgentWithStateMachine, type LLMResponse, type ToolResult, type Usage } from 'agent-state-machine';
import { JsonlHistorySink } from 'agent-state-machine/history';

type Message = OpenAI.Chat.ChatCompletionMessageParam;

// The adapter retries (and records every attempt); SDK retries on top would hide requests from the history.
const client = new OpenAI({ maxRetries: 0 });
const model = process.env.OPENAI_MODEL ?? 'gpt-4o-mini';
const MAX_OUTPUT_TOKENS = 1024;

// Your tools: what the model may call, and the code that runs each.
const tools: Record<string, (input: { path: string }, signal: AbortSignal) => Promise<string>> = {
  list_files: async ({ path }) => (await fs.readdir(path)).join('\n'),
};
const toolSpecs: OpenAI.Chat.ChatCompletionTool[] = [
  {
    type: 'function',
    function: {
      name: 'list_files',
      description: 'Lists the files in a folder',
      parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    },
  },
];

// Your messages, in your SDK's format.
const user = (content: string): Message => ({ role: 'user', content });
const toolMessages = (results: ToolResult[]): Message[] =>
  results.map((r) => ({ role: 'tool', tool_call_id: r.callId, content: r.output }));

// One request; the reply as the adapter reads it (text, tool calls, usage), and the message to keep.
async function send(
  messages: Message[],
  signal: AbortSignal,
  maxOutputTokens = MAX_OUTPUT_TOKENS,
): Promise<{ response: LLMResponse; reply: Message }> {
  const request = { model, messages, tools: toolSpecs, max_completion_tokens: maxOutputTokens };
  const completion = await client.chat.completions.create(request, { signal });
  const { message, finish_reason } = completion.choices[0]!;
  const calls = (message.tool_calls ?? []).flatMap((c) => (c.type === 'function' ? [c] : []));
  return {
    response: {
      text: message.content ?? undefined,
      toolCalls: calls.map((c) => ({ id: c.id, name: c.function.name, input: c.function.arguments })),
      usage: { inputTokens: completion.usage?.prompt_tokens, outputTokens: completion.usage?.completion_tokens },
      model: completion.model,
      finishReason: finish_reason,
    },
    reply: { role: 'assistant', content: message.content, ...(calls.length > 0 ? { tool_calls: calls } : {}) },
  };
}

// USD per million tokens; undefined for a model without a price, which stops a budgeted turn (never a silent $0).
const PRICES: Record<string, { input: number; output: number }> = { 'gpt-4o-mini': { input: 0.15, output: 0.6 } };
function priceOf(model: string | undefined, { inputTokens, outputTokens }: Usage): number | undefined {
  const price = Object.entries(PRICES).find(([name]) => model?.startsWith(name))?.[1];
  // A count the response did not report is unknown, not zero: the call is then charged at its worst case.
  if (price === undefined || inputTokens === undefined || outputTokens === undefined) return undefined;
  return (inputTokens * price.input + outputTokens * price.output) / 1e6;
}

async function main(): Promise<void> {
  const history: Message[] = [];
  const file = `run-${Date.now()}.jsonl`;
  const sink = JsonlHistorySink.open(file);
  const agent = new AgentWithStateMachine(
    {
      async sendUserMessage(message, { signal, maxOutputTokens }) {
        const outgoing = [user(message)];
        const { response, reply } = await send([...history, ...outgoing], signal, maxOutputTokens);
        history.push(...outgoing, reply); // only now: a retry never sends the message twice
        return response;
      },
      async sendToolResults(results, extraUserMessages, { signal, maxOutputTokens }) {
        // The extra user messages (autoformatters', gatherAdditionalMessages') go after the results.
        const outgoing = [...toolMessages(results), ...extraUserMessages.map(user)];
        const { response, reply } = await send([...history, ...outgoing], signal, maxOutputTokens);
        history.push(...outgoing, reply);
        return response;
      },
      // A throw (bad JSON, an unknown tool) becomes an error result the model sees.
      runTool: async (call, { signal }) => ({
        callId: call.id,
        output: await tools[call.name]!(JSON.parse(String(call.input)), signal),
      }),
      async settleToolCalls(results) {
        history.push(...toolMessages(results)); // no LLM call: just keep the conversation valid
      },
      // The most the next call can use, asked before it is made: the dollar cap holds its price,
      // so spend never passes the cap. A token is at least one byte of the request.
      llmCallBound(call, { maxOutputTokens = MAX_OUTPUT_TOKENS }) {
        const outgoing =
          call.operation === 'sendUserMessage'
            ? [user(call.message)]
            : [...toolMessages(call.results), ...call.messages.map(user)];
        const messages = [...history, ...outgoing];
        const bytes = Buffer.byteLength(JSON.stringify({ messages, tools: toolSpecs }));
        return { inputTokens: bytes + 256 + 16 * messages.length, maxOutputTokens, model };
      },
    },
    {
      budget: { maxCostUsd: 0.05, maxLlmCalls: 10 },
      pricing: (usage, { model }) => priceOf(model, usage),
      retry: { retries: 2, baseDelayMs: 500 },
      sink, // every move, with its time
      journal: true, // and every request and tool call, for `agent-sm show` and `replay`
    },
  );

  const result = await agent.runTurn('Which files are in the current folder? Answer in one sentence.');
  console.log(`${result.outcome}: ${result.text ?? result.error?.message}`);
  const { costUsd, llmCalls, toolCalls } = result.usage;
  console.log(`cost $${costUsd.toFixed(6)}, LLM calls: ${llmCalls} (retries included), tool calls: ${toolCalls}`);
  console.log(`Every move and request is in ${file}: npx agent-sm show ${file}`);
  sink.close();
  if (result.outcome !== 'end_of_turn') process.exitCode = 1;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
