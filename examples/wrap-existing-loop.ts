/**
 * `npm run example:wrap`: an agent loop as people write it by hand, and the same loop
 * wrapped by AgentWithStateMachine. The loop's pieces (call the LLM, run a tool) stay as
 * they are; only the `while` moves into the adapter, which then validates, times and
 * records every step and enforces cancellation and budgets.
 */
import { AgentWithStateMachine, formatHistory, type LLMResponse, type ToolCall, type ToolResult } from '../lib/index';

// ---- What you already have: an LLM client and some tools (canned here, so it runs offline). ----

type Message = { role: 'user' | 'assistant' | 'tool'; content: string };

const fakeLLM = {
  turn: 0,
  async send(messages: Message[]): Promise<LLMResponse> {
    this.turn += 1;
    const last = messages.at(-1)!;
    if (last.role === 'user') return { toolCalls: [{ id: `call_${this.turn}`, name: 'list_files', input: { dir: '.' } }], usage: { inputTokens: 800, outputTokens: 30, costUsd: 0.003 } };
    return { text: `I see: ${last.content}`, usage: { inputTokens: 900, outputTokens: 25, costUsd: 0.003 } };
  },
};

const tools: Record<string, (input: unknown) => Promise<string>> = {
  list_files: async () => 'README.md package.json lib/ test/',
};

// ---- Before: the plain loop. ----

async function plainLoop(history: Message[], userMessage: string): Promise<string | undefined> {
  history.push({ role: 'user', content: userMessage });
  let response = await fakeLLM.send(history);
  while (response.toolCalls?.length) {
    for (const call of response.toolCalls) {
      const output = await tools[call.name]!(call.input);
      history.push({ role: 'tool', content: output });
    }
    response = await fakeLLM.send(history);
  }
  history.push({ role: 'assistant', content: response.text ?? '' });
  return response.text;
}

// ---- After: the same pieces, handed to the adapter. The conversation stays yours. ----

function wrap(history: Message[]): AgentWithStateMachine {
  return new AgentWithStateMachine(
    {
      async sendUserMessage(message) {
        history.push({ role: 'user', content: message });
        return fakeLLM.send(history);
      },
      async sendToolResults(results: ToolResult[], messages: string[]) {
        for (const r of results) history.push({ role: 'tool', content: r.output });
        for (const m of messages) history.push({ role: 'user', content: m });
        return fakeLLM.send(history);
      },
      async runTool(call: ToolCall) {
        return { callId: call.id, output: await tools[call.name]!(call.input) };
      },
    },
    { budget: { maxCostUsd: 1 }, logger: false },
  );
}

async function main(): Promise<void> {
  console.log('Plain loop:', await plainLoop([], 'What files are here?'));

  const agent = wrap([]);
  const result = await agent.runTurn('What files are here?');
  console.log('Wrapped loop:', result.outcome, '-', result.text);
  console.log(`\nWhat the wrapped loop recorded (${agent.usage.llmCalls} LLM calls, $${agent.usage.costUsd.toFixed(3)}):`);
  console.log(formatHistory(agent.machine.history()));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
