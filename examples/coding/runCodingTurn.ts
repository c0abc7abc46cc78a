import * as fs from 'node:fs/promises';
import { AgentWithStateMachine, type AgentLoop, type TurnResult } from '../../lib/index';
import { createPricing } from '../../lib/integrations/pricing';

/**
 * What the OpenAI (Chat and Responses) and the Anthropic coding examples share once their SDK
 * loop is built: one budgeted turn on the failing-test question, each move printed with the
 * text the model streamed before it, then the outcome, the usage and the conversation's roles.
 */

/** Options of the coding examples. */
export interface CodingExampleOptions {
  /** Where lines go. Default: stdout. */
  print?: (line: string) => void;
  /** Environment to read the endpoint from. Default: process.env. */
  env?: NodeJS.ProcessEnv;
}

/** Collects streamed text between moves; a retried stream starts over, so what the failed attempt showed is dropped. */
class StreamedText {
  #text = '';
  #attempt = 0;

  /** The loop's `stream.onText`. */
  readonly onText = (delta: string, { attempt }: { attempt: number }): void => {
    if (attempt !== this.#attempt) [this.#text, this.#attempt] = ['', attempt];
    this.#text += delta;
  };

  /** The text so far, which is then forgotten. */
  take(): string {
    const text = this.#text;
    this.#text = '';
    return text;
  }
}

/** What the streamed text goes to: the SDK loop's `stream.onText`. */
export type OnText = (delta: string, info: { attempt: number }) => void;

/** The conversation an SDK loop keeps: messages with roles (Chat Completions, Messages), or Responses input items. */
export type KeptConversation =
  { readonly messages: readonly { role: string }[] } | { readonly items: readonly unknown[] };

/** `N messages (user, assistant, …)`, or for Responses items `N items (user, function_call, …)`. */
function describeConversation(loop: KeptConversation): string {
  if ('messages' in loop) return `${loop.messages.length} messages (${loop.messages.map((m) => m.role).join(', ')})`;
  const labels = loop.items.map((i) => {
    const item = i as { type?: string; role?: string };
    return (item.type ?? 'message') === 'message' ? String(item.role) : String(item.type);
  });
  return `${loop.items.length} items (${labels.join(', ')})`;
}

/**
 * Builds the loop with `makeLoop`, runs the turn and prints it; removes the workspace `dir`
 * and closes the local server at the end, even when building the loop fails.
 */
export async function runCodingTurn(
  makeLoop: (onText: OnText) => AgentLoop & KeptConversation,
  print: (line: string) => void,
  cleanup: { dir: string; server?: { close(): Promise<void> } | undefined },
): Promise<TurnResult> {
  try {
    const streamed = new StreamedText();
    const loop = makeLoop(streamed.onText);
    const agent = new AgentWithStateMachine(loop, {
      budget: { maxCostUsd: 0.25, strict: false, maxLlmCalls: 12 }, // a plain cap: this loop bounds no call
      pricing: createPricing(),
      logger: false,
    });
    agent.machine.onTransition((r) => {
      print(`  ${r.from} → ${r.to}  ${r.description}`);
      if (r.to !== 'ProcessingLLMResponse') return;
      const text = streamed.take();
      if (text !== '') print(`    llm> ${text}`);
    });
    const result = await agent.runTurn('Why does `node test.js` fail? Find the cause.');
    print(`\n${result.outcome}: ${result.text ?? result.error?.message ?? ''}`);
    print(
      `usage: ${result.usage.inputTokens} input + ${result.usage.outputTokens} output tokens, $${result.usage.costUsd.toFixed(6)}, ${result.usage.llmCalls} LLM calls, ${result.usage.toolCalls} tool calls`,
    );
    print(`conversation: ${describeConversation(loop)}`);
    return result;
  } finally {
    await cleanup.server?.close();
    await fs.rm(cleanup.dir, { recursive: true, force: true });
  }
}
