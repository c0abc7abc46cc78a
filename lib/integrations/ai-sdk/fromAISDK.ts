import {
  asSchema,
  generateText,
  streamText,
  type CallSettings,
  type LanguageModel,
  type ModelMessage,
  type StepResult,
  type StopCondition,
  type Tool,
  type ToolSet,
} from 'ai';
import {
  InvalidArgumentError,
  type AgentLoop,
  type LLMCall,
  type LLMCallBound,
  type LLMResponse,
  type CompactInfo,
  type CompactResult,
  type OperationContext,
  type SettleInfo,
  type ToolCall,
  type ToolResult,
  watchOutputBound,
} from 'agent-state-machine';
import { compactTurns } from '../../internal/dropOldestTurns';
import { messageOf } from '../../internal/messageOf';
import { safeStringify } from '../../internal/safeStringify';
import { loweredMaxTokens } from '../../internal/loweredMaxTokens';
import { markUnbounded } from '../../internal/unboundedLoop';
import { beforeLastRound } from '../../internal/beforeLastRound';
import { requestTokenBound } from '../../internal/requestTokenBound';
import { usageFromAISDK } from './usageFromAISDK';

/** Provider-specific options, as `generateText` takes them (the SDK does not export the type by name). */
type ProviderOptions = NonNullable<Parameters<typeof generateText>[0]['providerOptions']>;

/** Call settings passed to every model step, as `generateText` takes them. `maxRetries` and `abortSignal` are the adapter's. */
export type AISDKCallSettings = Omit<CallSettings, 'maxRetries' | 'abortSignal'>;

/** Options of `fromAISDK(options)`: the model, its tools, and the conversation to start from. */
export interface FromAISDKOptions {
  /** Any AI SDK language model: `openai('gpt-4.1')`, `anthropic(…)`, a gateway id string, a mock. */
  model: LanguageModel;
  /**
   * Your `tool()` definitions. Their `execute` is run by the adapter, one call per `runTool`,
   * after the input passed the tool's schema. Read at every step, so changes made to the record
   * in place reach the next one.
   */
  tools?: ToolSet;
  /** The system prompt, sent with every step (kept out of `messages`) as `instructions` (AI SDK 7's name) and `system` (6's). */
  system?: string;
  /** A conversation to continue; copied, never mutated. */
  messages?: ModelMessage[];
  /** Temperature, max output tokens, headers, … for every step. Retries are the adapter's (`retry` option), so the SDK's `maxRetries` is always 0. */
  callSettings?: AISDKCallSettings;
  /** Provider options for every step (`{ anthropic: { … } }`). */
  providerOptions?: ProviderOptions;
  /**
   * Stream each step with `streamText` instead of `generateText`. `onText` gets the text as it
   * arrives, with the attempt: a retried step starts again from its first delta, so a UI showing
   * it resets when `attempt` changes.
   */
  stream?: boolean | { onText(delta: string, info: { turn: number; attempt: number }): void };
}

/** An `AgentLoop` over an AI SDK model, with the conversation it keeps. */
export interface AISDKAgentLoop extends AgentLoop {
  /** The conversation so far in the SDK's own message format (a copy): user, assistant and tool messages, without the system prompt. */
  readonly messages: ModelMessage[];
}

/** A tool call of the last response: what it asked for, and the SDK's message when its input failed the schema. */
interface Pending {
  toolName: string;
  input: unknown;
  invalid?: string;
}

/**
 * Makes an AI SDK model an `AgentLoop`: one model step per LLM call (`generateText`, or
 * `streamText` with `stream`, stopped at the first step and with `maxRetries: 0`), the tools'
 * `execute` run by the adapter, so cancellation, budgets, `toolConcurrency`, retries and the
 * history cover every call. A call whose input fails its tool's schema (or names no tool) is
 * answered once with the SDK's validation message as an error result and never executed.
 * Messages join the conversation only after the step that carries them succeeded.
 *
 * ```ts
 * const agent = new AgentWithStateMachine(fromAISDK({ model: openai('gpt-4.1'), tools: { weather } }), { pricing });
 * ```
 */
export function fromAISDK(options: FromAISDKOptions): AISDKAgentLoop {
  return new AISDKLoop(checkOptions(options));
}

/** A final call's instruction joins the conversation with the messages it is sent with. */
function withInstruction(added: ModelMessage[], ctx: OperationContext): ModelMessage[] {
  return ctx.wrapUp === undefined ? added : [...added, { role: 'user', content: ctx.wrapUp }];
}

/** The budget note, which rides on one request alone. */
function noteOf(ctx: OperationContext): ModelMessage[] {
  return ctx.budgetNote === undefined ? [] : [{ role: 'user', content: ctx.budgetNote }];
}

/**
 * The messages a request sends: the conversation, `added` (the instruction last) and the note;
 * a final call without the last round (`ctx.withoutLastRound`) sends the conversation as it
 * stood before its last response, then the instruction (`added` is still what it commits).
 */
function sentMessages(messages: ModelMessage[], added: ModelMessage[], ctx: OperationContext): ModelMessage[] {
  const before = ctx.withoutLastRound === true && ctx.wrapUp !== undefined ? beforeLastRound(messages) : undefined;
  if (before !== undefined) return [...before, { role: 'user', content: ctx.wrapUp! }, ...noteOf(ctx)];
  return [...messages, ...added, ...noteOf(ctx)];
}

class AISDKLoop implements AISDKAgentLoop {
  readonly honours = Object.freeze({ wrapUp: true, budgetNote: true });
  /** Its compact drops the older turns: no LLM call. */
  readonly compactCalls = 'none' as const;
  readonly #options: FromAISDKOptions;
  readonly #messages: ModelMessage[];
  #pending = new Map<string, Pending>();
  /** Raw outputs of tools that ran, for `toModelOutput` and JSON results. */
  #outputs = new Map<string, unknown>();

  constructor(options: FromAISDKOptions) {
    this.#options = options;
    this.#messages = [...(options.messages ?? [])];
    // A strict cap refuses a loop whose requests ask for no max output tokens before anything runs.
    if (options.callSettings?.maxOutputTokens === undefined)
      markUnbounded(this, {
        setting: 'options.callSettings.maxOutputTokens',
        remedy: '`callSettings.maxOutputTokens` on the loop',
        why: "fromAISDK sets no max output tokens, so a call's output (and its cost) has no bound",
      });
  }

  get messages(): ModelMessage[] {
    return [...this.#messages];
  }

  sendUserMessage(message: string, ctx: OperationContext): Promise<LLMResponse> {
    return this.#step([{ role: 'user', content: message }], ctx);
  }

  async sendToolResults(results: ToolResult[], messages: string[], ctx: OperationContext): Promise<LLMResponse> {
    const added: ModelMessage[] = [
      await this.#toolMessage(results),
      ...messages.map((m): ModelMessage => ({ role: 'user', content: m })),
    ];
    return this.#step(added, ctx);
  }

  /**
   * The bound of the next step's request: its messages, system prompt and tools (their input
   * schemas as JSON Schema) serialized, and `callSettings.maxOutputTokens` (lowered to
   * `ctx.maxOutputTokens`). Throws when no max output tokens are set.
   */
  async llmCallBound(call: LLMCall, ctx: OperationContext): Promise<LLMCallBound> {
    const { model, system, callSettings, tools } = this.#options;
    const max = loweredMaxTokens(callSettings?.maxOutputTokens, ctx.maxOutputTokens);
    if (max === undefined)
      throw new Error(
        "fromAISDK sets no max output tokens, so a call's output (and its cost) has no bound: set callSettings.maxOutputTokens (a strict maxCostUsd needs it)",
      );
    const added = withInstruction(await this.#added(call), ctx);
    const toolDefs = await Promise.all(
      Object.entries(tools ?? {}).map(async ([name, t]) => ({
        name,
        description: t.description,
        inputSchema: await asSchema(t.inputSchema).jsonSchema,
      })),
    );
    const body = { system, messages: sentMessages(this.#messages, added, ctx), tools: toolDefs };
    return {
      inputTokens: requestTokenBound(body, body.messages.length + 1, toolDefs.length),
      maxOutputTokens: max,
      model: typeof model === 'string' ? model : model.modelId,
    };
  }

  /** The messages a call adds to the conversation. */
  async #added(call: LLMCall): Promise<ModelMessage[]> {
    if (call.operation === 'sendUserMessage') return [{ role: 'user', content: call.message }];
    return [
      await this.#toolMessage(call.results),
      ...call.messages.map((m): ModelMessage => ({ role: 'user', content: m })),
    ];
  }

  /**
   * Resuming: the request's messages and the recorded answer (its text and tool calls as an
   * assistant message) join the conversation, as a step would add them; the answer's tool calls
   * become the ones `runTool` takes.
   */
  async acceptRecorded(
    _operation: 'sendUserMessage' | 'sendToolResults',
    input:
      { kind: 'user_message'; message: string } | { kind: 'tool_results'; results: ToolResult[]; messages: string[] },
    response: LLMResponse,
  ): Promise<void> {
    const added: ModelMessage[] =
      input.kind === 'user_message'
        ? [{ role: 'user', content: input.message }]
        : [
            await this.#toolMessage(input.results),
            ...input.messages.map((m): ModelMessage => ({ role: 'user', content: m })),
          ];
    const calls = response.toolCalls ?? [];
    const content = [
      ...(response.text !== undefined && response.text !== '' ? [{ type: 'text' as const, text: response.text }] : []),
      ...calls.map((c) => ({ type: 'tool-call' as const, toolCallId: c.id, toolName: c.name, input: c.input ?? {} })),
    ];
    this.#messages.push(...added, ...(content.length > 0 ? [{ role: 'assistant' as const, content }] : []));
    this.#pending = new Map(calls.map((c) => [c.id, { toolName: c.name, input: c.input }]));
    this.#outputs = new Map();
  }

  async runTool(call: ToolCall, ctx: OperationContext): Promise<ToolResult> {
    const pending = this.#pending.get(call.id);
    if (pending === undefined)
      throw new Error(
        `no tool call ${JSON.stringify(call.id)} in the last response (runTool takes the calls the last response asked for)`,
      );
    // Answered with the SDK's own message, and never executed: the model gets to fix its input.
    if (pending.invalid !== undefined) return { callId: call.id, output: pending.invalid, isError: true };
    const tool = this.#options.tools?.[pending.toolName];
    if (tool?.execute === undefined)
      return { callId: call.id, output: `tool ${pending.toolName} has no execute function`, isError: true };
    // `context` is AI SDK 7's per-tool context (from `toolsContext`), required in its options type;
    // tools that declare a `contextSchema` are refused by fromAISDK, so there is none to pass.
    const options = {
      toolCallId: call.id,
      messages: this.messages,
      abortSignal: ctx.signal,
      context: undefined,
    } as ToolExecuteOptions;
    let output: unknown = await tool.execute(pending.input as never, options);
    // A streaming tool (an async iterable of previews): its last value is its result, as in the SDK.
    if (isAsyncIterable(output)) {
      let last: unknown;
      for await (const value of output) last = value;
      output = last;
    }
    this.#outputs.set(call.id, output);
    return { callId: call.id, output: typeof output === 'string' ? output : safeStringify(output ?? null) };
  }

  async settleToolCalls(results: ToolResult[], _info: SettleInfo, _ctx: OperationContext): Promise<void> {
    this.#messages.push(await this.#toolMessage(results));
    this.#pending = new Map();
    this.#outputs = new Map();
  }

  /**
   * Used when the adapter's `compact` option is on: drops the older half of the earlier turns.
   * A turn starts at a user message (tool results are `tool` messages), so no tool call loses
   * its result; while tool results are pending, the turn in progress stays.
   */
  async compact(info: CompactInfo, _ctx: OperationContext): Promise<CompactResult> {
    return compactTurns(this.#messages, (m) => m.role === 'user', info.operation);
  }

  /** One model step on the conversation plus `added`; commits both only when it succeeded. */
  async #step(sent: ModelMessage[], ctx: OperationContext): Promise<LLMResponse> {
    const { model, system, callSettings, providerOptions, stream, tools } = this.#options;
    const added = withInstruction(sent, ctx);
    // The tools as the model sees them: no `execute`, so a step stops at its tool calls. Made
    // at every step, so a record updated in place (as `mcpTools` does) offers its current tools.
    const modelTools =
      tools === undefined
        ? undefined
        : Object.fromEntries(Object.entries(tools).map(([name, t]) => [name, withoutExecute(t)]));
    const maxOutputTokens = loweredMaxTokens(callSettings?.maxOutputTokens, ctx.maxOutputTokens);
    const request = {
      ...callSettings,
      ...(maxOutputTokens === undefined ? {} : { maxOutputTokens }),
      model,
      // AI SDK 7 reads `instructions` (`system` is its deprecated fallback); 6 reads `system` and
      // leaves settings it does not know out.
      ...(system === undefined ? {} : { instructions: system, system }),
      messages: sentMessages(this.#messages, added, ctx),
      ...(modelTools === undefined ? {} : { tools: modelTools }),
      // A final call may use no tool; the definitions stay for the tool calls already in the conversation.
      ...(ctx.wrapUp === undefined || modelTools === undefined ? {} : { toolChoice: 'none' as const }),
      ...(providerOptions === undefined ? {} : { providerOptions }),
      maxRetries: 0,
      abortSignal: ctx.signal,
      stopWhen: firstStep,
    };
    let step: StepResult<ToolSet> | undefined;
    if (stream === undefined || stream === false) {
      step = (await generateText(request)).steps[0];
    } else {
      const onText = typeof stream === 'object' ? stream.onText : undefined;
      // A streamed step is cut at its max output tokens, whether the provider stops there or not.
      const watch = watchOutputBound(maxOutputTokens, ctx.signal);
      // Errors come back as stream parts; `onError` would only log them a second time.
      const result = streamText({ ...request, abortSignal: watch.signal, onError: () => {} });
      for await (const part of result.fullStream) {
        if (part.type === 'text-delta') {
          onText?.(part.text, { turn: ctx.turn, attempt: ctx.attempt ?? 1 });
          watch.add(part.text);
        } else if (part.type === 'reasoning-delta') watch.add(part.text);
        else if (part.type === 'tool-input-delta') watch.add(part.delta);
        else if (part.type === 'error') throw part.error;
        else if (part.type === 'abort') throw ctx.signal.reason ?? new Error('the step was aborted');
      }
      step = (await result.steps)[0];
    }
    if (step === undefined) throw new Error('the AI SDK returned no step');

    const pending = new Map<string, Pending>();
    const toolCalls: ToolCall[] = [];
    for (const part of step.content) {
      if (part.type !== 'tool-call' || part.providerExecuted === true) continue;
      const invalid = 'invalid' in part && part.invalid === true ? sdkErrorMessage(part.error) : undefined;
      pending.set(part.toolCallId, {
        toolName: part.toolName,
        input: part.input,
        ...(invalid === undefined ? {} : { invalid }),
      });
      toolCalls.push({ id: part.toolCallId, name: part.toolName, input: part.input });
    }
    // The SDK answers invalid calls itself in its response messages; the adapter answers them
    // (through runTool), so drop the SDK's answers: every call gets exactly one.
    const response = step.response.messages.flatMap((message): ModelMessage[] => {
      if (message.role !== 'tool') return [message];
      const content = message.content.filter(
        (part) => !(part.type === 'tool-result' && pending.get(part.toolCallId)?.invalid !== undefined),
      );
      return content.length === 0 ? [] : [{ ...message, content }];
    });

    this.#messages.push(...added, ...response);
    this.#pending = pending;
    this.#outputs = new Map();
    return {
      text: step.text,
      toolCalls,
      usage: usageFromAISDK(step.usage),
      // The SDK fills the response's model id from the model when the provider sends none.
      model: step.response.modelId ?? (typeof model === 'string' ? model : model.modelId),
      finishReason: step.rawFinishReason ?? step.finishReason,
    };
  }

  /** The tool message answering `results`: a tool's own output (through its `toModelOutput`), or the error text. */
  async #toolMessage(results: ToolResult[]): Promise<ModelMessage> {
    const content = await Promise.all(
      results.map(async (result) => {
        const pending = this.#pending.get(result.callId);
        const toolName = pending?.toolName ?? 'unknown';
        const tool = this.#options.tools?.[toolName];
        let output: ToolResultOutputValue;
        if (result.isError === true || !this.#outputs.has(result.callId)) {
          output =
            result.isError === true
              ? { type: 'error-text', value: result.output }
              : { type: 'text', value: result.output };
        } else {
          const raw = this.#outputs.get(result.callId);
          output =
            tool?.toModelOutput !== undefined
              ? await tool.toModelOutput({ toolCallId: result.callId, input: pending?.input, output: raw })
              : typeof raw === 'string'
                ? { type: 'text', value: raw }
                : { type: 'json', value: JSON.parse(safeStringify(raw ?? null)) as never };
        }
        return { type: 'tool-result' as const, toolCallId: result.callId, toolName, output };
      }),
    );
    return { role: 'tool', content };
  }
}

type ToolResultOutputValue = Awaited<ReturnType<NonNullable<Tool['toModelOutput']>>>;
type ToolExecuteOptions = Parameters<NonNullable<Tool['execute']>>[1];

/** Stops the SDK's loop after its first step, as `stepCountIs(1)` does (renamed `isStepCount` in AI SDK 7): the adapter runs the tools and asks for the next step. */
const firstStep: StopCondition<ToolSet> = ({ steps }) => steps.length >= 1;

function withoutExecute(tool: Tool): Tool {
  const { execute: _execute, ...rest } = tool as Tool & { execute?: unknown };
  return rest as Tool;
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === 'function'
  );
}

/** The text the SDK itself sends for a failed tool call (its `getErrorMessage`). */
function sdkErrorMessage(error: unknown): string {
  if (error === undefined || error === null) return 'unknown error';
  return messageOf(error);
}

function checkOptions(options: unknown): FromAISDKOptions {
  if (typeof options !== 'object' || options === null)
    throw new InvalidArgumentError(
      'options',
      'an object { model, tools?, system?, messages?, callSettings?, stream? }',
      options,
    );
  const { model, tools, system, messages, callSettings, providerOptions, stream } = options as Record<string, unknown>;
  const isModel =
    typeof model === 'string' ||
    (typeof model === 'object' &&
      model !== null &&
      typeof (model as { doGenerate?: unknown }).doGenerate === 'function');
  if (!isModel)
    throw new InvalidArgumentError(
      'model',
      'an AI SDK language model (a provider model such as openai("gpt-4.1"), or a model id string)',
      model,
    );
  if (tools !== undefined) {
    if (typeof tools !== 'object' || tools === null || Array.isArray(tools))
      throw new InvalidArgumentError('tools', 'a record of tool() definitions', tools);
    for (const [name, t] of Object.entries(tools)) {
      if (typeof t !== 'object' || t === null)
        throw new InvalidArgumentError(`tools.${name}`, 'a tool() definition', t);
      const def = t as Record<string, unknown>;
      if (def.type !== 'provider' && def.inputSchema === undefined)
        throw new InvalidArgumentError(
          `tools.${name}.inputSchema`,
          'a schema (zod, jsonSchema(), …): tool input is checked against it',
          def.inputSchema,
        );
      if (def.execute !== undefined && typeof def.execute !== 'function')
        throw new InvalidArgumentError(`tools.${name}.execute`, 'a function or undefined', def.execute);
      if (def.needsApproval !== undefined && def.needsApproval !== false) {
        throw new InvalidArgumentError(
          `tools.${name}.needsApproval`,
          'left out: the adapter runs every valid call; ask for approval inside execute',
          def.needsApproval,
        );
      }
      // AI SDK 7: a tool's own context comes from the call's `toolsContext`, which the adapter does not pass.
      if (def.contextSchema !== undefined) {
        throw new InvalidArgumentError(
          `tools.${name}.contextSchema`,
          'left out: fromAISDK passes no toolsContext; give execute what it needs through a closure',
          def.contextSchema,
        );
      }
    }
  }
  if (system !== undefined && typeof system !== 'string') throw new InvalidArgumentError('system', 'a string', system);
  if (messages !== undefined && !Array.isArray(messages))
    throw new InvalidArgumentError('messages', 'an array of ModelMessage', messages);
  if (callSettings !== undefined) {
    if (typeof callSettings !== 'object' || callSettings === null)
      throw new InvalidArgumentError('callSettings', 'an object of call settings', callSettings);
    const owned = {
      maxRetries: 'retries (its retry option; the SDK gets maxRetries 0)',
      abortSignal: 'cancellation (cancel() or runTurn({ signal }))',
      // AI SDK 7's approval statuses would hold back calls that the adapter then runs anyway.
      toolApproval: 'which calls run: it runs every valid call; ask for approval inside execute',
    };
    for (const [key, what] of Object.entries(owned)) {
      const value = (callSettings as Record<string, unknown>)[key];
      if (value !== undefined)
        throw new InvalidArgumentError(`callSettings.${key}`, `left out: the adapter owns ${what}`, value);
    }
  }
  if (providerOptions !== undefined && (typeof providerOptions !== 'object' || providerOptions === null))
    throw new InvalidArgumentError('providerOptions', 'an object', providerOptions);
  if (
    stream !== undefined &&
    typeof stream !== 'boolean' &&
    !(typeof stream === 'object' && stream !== null && typeof (stream as { onText?: unknown }).onText === 'function')
  ) {
    throw new InvalidArgumentError('stream', 'a boolean or { onText(delta, { turn, attempt }) }', stream);
  }
  return options as FromAISDKOptions;
}
