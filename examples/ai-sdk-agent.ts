/**
 * `npm run example:ai-sdk`: an AI SDK agent two ways.
 *
 * 1. `fromAISDK`: the model driven through the sixteen states by AgentWithStateMachine — the
 *    tools run by the adapter, every move recorded, retries and budgets enforced.
 * 2. `budgetFor`: the SDK keeps its own `generateText` loop; a budget is charged step by step
 *    and stops it when spent.
 *
 * Offline by default, on the SDK's mock model scripted below. With `AI_GATEWAY_API_KEY` set it
 * talks to a real model through the AI Gateway, which the `ai` package ships with
 * (`AI_SDK_MODEL`, default `openai/gpt-4.1-mini`).
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { generateText, stepCountIs, tool, type LanguageModel } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';
import { AgentWithStateMachine, Budget, formatHistory, type Pricing, type TurnResult } from '../lib/index';
import { budgetFor, fromAISDK } from '../lib/integrations/ai-sdk/index';

const root = path.resolve(__dirname, '..');

// ---- What an AI SDK user already has: tool() definitions. ----

const tools = {
  list_files: tool({
    description: 'List the files of a folder of this project',
    inputSchema: z.object({ dir: z.string().describe('a folder, relative to the project root') }),
    execute: async ({ dir }) =>
      (await readdir(path.join(root, dir)))
        .filter((f) => !f.startsWith('.'))
        .sort()
        .join('\n'),
  }),
  read_file: tool({
    description: 'Read the first lines of a file of this project',
    inputSchema: z.object({ file: z.string(), lines: z.number().int().positive().max(50) }),
    execute: async ({ file, lines }) =>
      (await readFile(path.join(root, file), 'utf8')).split('\n').slice(0, lines).join('\n'),
  }),
};

// ---- The offline model: the SDK's own mock, scripted step by step. ----

type Content = Parameters<typeof textStep>[0];
function textStep(
  content: Array<
    { type: 'text'; text: string } | { type: 'tool-call'; toolCallId: string; toolName: string; input: string }
  >,
) {
  return {
    content,
    finishReason: content.some((c) => c.type === 'tool-call')
      ? { unified: 'tool-calls' as const, raw: 'tool_calls' }
      : { unified: 'stop' as const, raw: 'stop' },
    usage: {
      // Within what the request can hold: a provider counts no more input tokens than the request's bytes.
      inputTokens: { total: 800, noCache: 200, cacheRead: 600, cacheWrite: undefined },
      outputTokens: { total: 60, text: 60, reasoning: undefined },
    },
    warnings: [],
    response: { modelId: 'mock-model-v1' },
  };
}
const callTool = (id: string, toolName: string, input: unknown): Content[number] => ({
  type: 'tool-call',
  toolCallId: id,
  toolName,
  input: JSON.stringify(input),
});

function offlineModel(): LanguageModel {
  const steps = [
    // The model asks for two things at once; the second input breaks the tool's schema
    // (`lines` missing), so it is answered with the SDK's validation message and never run.
    textStep([
      callTool('call_1', 'list_files', { dir: '.' }),
      callTool('call_2', 'read_file', { file: 'package.json' }),
    ]),
    textStep([callTool('call_3', 'read_file', { file: 'package.json', lines: 3 })]),
    textStep([{ type: 'text', text: 'This is agent-state-machine: a README, lib/, states/, tests and examples.' }]),
  ];
  let i = 0;
  return new MockLanguageModelV3({
    modelId: 'mock-model',
    doGenerate: async () => steps[Math.min(i++, steps.length - 1)]!,
  });
}

/** Prices per million tokens, for the models this example knows; `undefined` for the rest. */
const PRICES: Record<string, { input: number; cachedInput: number; output: number }> = {
  'mock-model-v1': { input: 1, cachedInput: 0.1, output: 4 },
  // The offline model's id as a request names it (its responses say mock-model-v1): a strict cap prices the request's worst case.
  'mock-model': { input: 1, cachedInput: 0.1, output: 4 },
  'gpt-4.1-mini': { input: 0.4, cachedInput: 0.1, output: 1.6 },
};
const pricing: Pricing = (usage, { model }) => {
  const price =
    model === undefined
      ? undefined
      : (PRICES[model] ?? PRICES[model.replace(/^.*\//, '').replace(/-\d{4}-\d{2}-\d{2}$/, '')]);
  const { inputTokens, outputTokens, cachedInputTokens: cached = 0 } = usage;
  // A count the response did not report is unknown, not zero: the call is then charged at its worst case.
  if (price === undefined || inputTokens === undefined || outputTokens === undefined) return undefined;
  return ((inputTokens - cached) * price.input + cached * price.cachedInput + outputTokens * price.output) / 1e6;
};

export interface ExampleOptions {
  model?: LanguageModel;
  print?: (line: string) => void;
}

/** Runs both modes and returns what each did. */
export async function runExample(
  options: ExampleOptions = {},
): Promise<{ turn: TurnResult; history: string; steps: number; budget: Budget }> {
  const print = options.print ?? console.log;
  const question = 'What is this project? Look at its files.';

  // Mode 1: the constructor call plus the tools is the whole integration.
  const loop = fromAISDK({
    model: options.model ?? offlineModel(),
    tools,
    system: 'You answer questions about a code project. Be brief.',
    // Bounds each call's output: the dollar cap below is strict, and holds each call's worst case.
    callSettings: { maxOutputTokens: 1024 },
  });
  const agent = new AgentWithStateMachine(loop, {
    budget: { maxCostUsd: 0.05, maxLlmCalls: 10 },
    pricing,
    toolConcurrency: 4,
    logger: false,
  });
  const turn = await agent.runTurn(question);
  const history = formatHistory(agent.machine.history());
  print(`fromAISDK: ${turn.outcome} — ${turn.text ?? turn.error?.message}`);
  print(
    `  ${turn.usage.llmCalls} LLM calls, ${turn.usage.toolCalls} tool calls, ${turn.usage.inputTokens + turn.usage.outputTokens} tokens, $${turn.usage.costUsd.toFixed(5)}`,
  );
  print(`  conversation: ${loop.messages.map((m) => m.role).join(', ')}`);
  print(history);

  // Mode 2: the SDK's own loop, with a budget on it.
  const budget = new Budget({ maxCostUsd: 0.05, maxLlmCalls: 2 });
  const guard = budgetFor(budget, { pricing });
  const result = await generateText({
    model: options.model ?? offlineModel(),
    tools: guard.wrapTools(tools),
    prompt: question,
    prepareStep: guard.prepareStep,
    stopWhen: [stepCountIs(10), guard.stopWhen],
    onStepFinish: guard.onStepFinish,
    abortSignal: guard.abortSignal,
  });
  guard.dispose();
  print(
    `\nbudgetFor: ${result.steps.length} steps, then ${guard.stopped ? `stopped: ${guard.stopped.message}` : `finished: ${result.text}`}`,
  );
  print(
    `  charged ${budget.usage.llmCalls} LLM calls, ${budget.usage.toolCalls} tool calls, $${budget.usage.costUsd.toFixed(5)} (no per-state history in this mode)`,
  );
  return { turn, history, steps: result.steps.length, budget };
}

if (require.main === module) {
  const gateway = process.env.AI_GATEWAY_API_KEY ? (process.env.AI_SDK_MODEL ?? 'openai/gpt-4.1-mini') : undefined;
  console.log(
    gateway
      ? `Using ${gateway} through the AI Gateway.\n`
      : 'Offline, on the AI SDK mock model (set AI_GATEWAY_API_KEY for a real one).\n',
  );
  runExample(gateway === undefined ? {} : { model: gateway }).catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
