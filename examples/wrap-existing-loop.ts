/**
 * `npm run example:wrap`: an agent loop as people write it by hand, and the same loop
 * wrapped by AgentWithStateMachine. The loop's pieces (call the LLM, run a tool) stay as
 * they are; only the `while` moves into the adapter, which then validates, times and
 * records every step and enforces cancellation, retries and budgets.
 *
 * The wrapped loop is correct under retries and cancellation: a message joins the
 * conversation only once the call that carries it succeeded (a retry never sends it twice),
 * and `settleToolCalls` answers the tool calls of a turn that ended early (a provider rejects
 * a conversation whose tool calls have no results).
 */
import {
  AgentWithStateMachine,
  formatHistory,
  type LLMResponse,
  type ToolCall,
  type ToolCallEvent,
  type ToolResult,
  type TurnResult,
} from '../lib/index';

// ---- What you already have: an LLM client and some tools (canned here, so it runs offline). ----

/** Chat messages as the Chat Completions API takes them. */
export type Message =
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string | null; tool_calls?: Array<{ id: string; name: string }> }
  | { role: 'tool'; tool_call_id: string; content: string };

/** A fake LLM that checks the conversation as the real API does, and fails its first call with a 529. */
export function fakeLLM(): {
  send(messages: Message[], signal?: AbortSignal): Promise<LLMResponse>;
  received: Message[][];
} {
  let calls = 0;
  const received: Message[][] = [];
  return {
    received,
    async send(messages, signal) {
      received.push(messages.map((m) => ({ ...m })));
      calls += 1;
      if (signal?.aborted) throw new Error('aborted');
      // What the provider answers with a 400 (never retried by default).
      messages.forEach((m, i) => {
        if (m.role !== 'assistant' || m.tool_calls === undefined) return;
        const answered = messages
          .slice(i + 1, i + 1 + m.tool_calls.length)
          .map((r) => (r.role === 'tool' ? r.tool_call_id : undefined));
        if (m.tool_calls.some((c, k) => answered[k] !== c.id)) {
          throw Object.assign(
            new Error("400 An assistant message with 'tool_calls' must be followed by tool messages"),
            { status: 400 },
          );
        }
      });
      if (calls === 1) throw Object.assign(new Error('529 overloaded'), { status: 529 });
      const last = messages.at(-1)!;
      const usage = { inputTokens: 800, outputTokens: 30, costUsd: 0.003 };
      if (last.role === 'user' && last.content.startsWith('List')) {
        return {
          text: 'Let me look.',
          toolCalls: [
            { id: `call_${calls}a`, name: 'list_files' },
            { id: `call_${calls}b`, name: 'slow_search' },
          ],
          usage,
        };
      }
      return { text: `Done: ${last.content}`, usage };
    },
  };
}

/** The tools; `slow_search` takes a while and stops when its signal aborts. */
export const tools: Record<string, (input: unknown, signal: AbortSignal) => Promise<string>> = {
  list_files: async () => 'README.md package.json lib/ test/',
  slow_search: (_input, signal) =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => resolve('3 matches'), 50);
      signal.addEventListener('abort', () => (clearTimeout(timer), reject(new Error('search aborted'))), {
        once: true,
      });
    }),
};

// ---- Before: the plain loop. ----

async function plainLoop(
  llm: ReturnType<typeof fakeLLM>,
  history: Message[],
  userMessage: string,
): Promise<string | undefined> {
  history.push({ role: 'user', content: userMessage });
  let response = await llm.send(history).catch(() => llm.send(history)); // one hand-rolled retry
  while (response.toolCalls?.length) {
    history.push({
      role: 'assistant',
      content: response.text ?? null,
      tool_calls: response.toolCalls.map((c) => ({ id: c.id, name: c.name })),
    });
    const outputs = await Promise.all(
      response.toolCalls.map((call) => tools[call.name]!(call.input, new AbortController().signal)),
    );
    response.toolCalls.forEach((call, i) =>
      history.push({ role: 'tool', tool_call_id: call.id, content: outputs[i]! }),
    );
    response = await llm.send(history);
  }
  history.push({ role: 'assistant', content: response.text ?? '' });
  return response.text;
}

// ---- After: the same pieces, handed to the adapter. The conversation stays yours. ----

/** The assistant message that carries a response: its text and the tool calls it asked for. */
function assistant(response: LLMResponse): Message {
  const calls = response.toolCalls ?? [];
  return calls.length === 0
    ? { role: 'assistant', content: response.text ?? '' }
    : { role: 'assistant', content: response.text ?? null, tool_calls: calls.map((c) => ({ id: c.id, name: c.name })) };
}

const toolMessages = (results: ToolResult[]): Message[] =>
  results.map((r) => ({
    role: 'tool',
    tool_call_id: r.callId,
    content: r.isError === true ? `error: ${r.output}` : r.output,
  }));

export function wrap(llm: ReturnType<typeof fakeLLM>, history: Message[]): AgentWithStateMachine {
  return new AgentWithStateMachine(
    {
      // Build the request from the history plus what this call carries; commit both only on success,
      // so that a retry (same arguments) never sends the user message twice.
      async sendUserMessage(message, { signal }) {
        const outgoing: Message[] = [{ role: 'user', content: message }];
        const response = await llm.send([...history, ...outgoing], signal);
        history.push(...outgoing, assistant(response));
        return response;
      },
      async sendToolResults(results, extraUserMessages, { signal }) {
        const outgoing: Message[] = [
          ...toolMessages(results),
          ...extraUserMessages.map((m): Message => ({ role: 'user', content: m })),
        ];
        const response = await llm.send([...history, ...outgoing], signal);
        history.push(...outgoing, assistant(response));
        return response;
      },
      async runTool(call: ToolCall, { signal }) {
        return { callId: call.id, output: await tools[call.name]!(call.input, signal) };
      },
      // A turn that ended before its tool results were sent (cancelled, out of budget, failed):
      // record one result per call so that the next turn's conversation is valid.
      async settleToolCalls(results) {
        history.push(...toolMessages(results));
      },
    },
    { budget: { maxCostUsd: 1, strict: false }, toolConcurrency: 4, logger: false },
  );
}

/** Runs the plain loop, then three wrapped turns: one retried, one cancelled mid-tool, one after it. */
export async function runExample(
  print: (line: string) => void = console.log,
): Promise<{ results: TurnResult[]; history: Message[]; llm: ReturnType<typeof fakeLLM> }> {
  print(`Plain loop: ${await plainLoop(fakeLLM(), [], 'What files are here?')}`);

  const llm = fakeLLM();
  const history: Message[] = [];
  const agent = wrap(llm, history);
  const results: TurnResult[] = [];
  results.push(await agent.runTurn('What files are here?')); // the 529 is retried; the user message is sent once
  // The user presses Esc once list_files has finished and slow_search is still running.
  const pressEsc = (event: ToolCallEvent): void => {
    if (event.call.name !== 'list_files') return;
    agent.off('toolCall', pressEsc);
    agent.cancel('user pressed Esc');
  };
  agent.on('toolCall', pressEsc);
  results.push(await agent.runTurn('List the files and search for TODO'));
  results.push(await agent.runTurn('Carry on')); // valid: the interrupted calls were settled
  for (const r of results)
    print(
      `Wrapped turn ${r.turn}: ${r.outcome}${r.text === undefined ? '' : ` - ${r.text}`}${r.error === undefined ? '' : ` (${r.error.message})`}`,
    );
  print(`\nThe conversation (${history.length} messages):`);
  for (const m of history)
    print(
      `  ${m.role}: ${m.role === 'tool' ? `[${m.tool_call_id}] ` : ''}${m.content ?? ''}${m.role === 'assistant' && m.tool_calls ? ` → ${m.tool_calls.map((c) => c.name).join(', ')}` : ''}`,
    );
  print(`\nWhat the wrapped loop recorded (${agent.usage.llmCalls} LLM calls, $${agent.usage.costUsd.toFixed(3)}):`);
  print(formatHistory(agent.machine.history()));
  return { results, history, llm };
}

if (require.main === module) {
  runExample().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
