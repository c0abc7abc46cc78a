import {
  APICallError,
  type LanguageModel,
  type ModelMessage,
  type StepResult,
  type StopCondition,
  type ToolSet,
} from 'ai';
import {
  InvalidArgumentError,
  StepMirror,
  watchOutputBound,
  type LLMCallBound,
  type MirrorResponse,
  type OutputBoundWatch,
  type StepMirrorOptions,
  type TurnResult,
} from 'agent-state-machine';
import { JsonlHistorySink, type JsonlHistorySinkOptions } from 'agent-state-machine/history';
import { requestTokenBound } from '../../internal/requestTokenBound';
import { safeStringify } from '../../internal/safeStringify';
import { modelResponseOf, StreamCollector, type ModelCallResult } from './modelResponseOf';
import { recordedResult, recordedStream } from './recordedModelResult';
import { withFlags, type CallOptions } from './withFlags';

/** Options of `mirrorAISDK(options)`: a mirror's options (budgets, pricing, journal, …), or a mirror to drive. */
export interface MirrorAISDKOptions extends StepMirrorOptions {
  /** A mirror to drive instead of making one (a batch task gets one); its own options are then not given here. */
  mirror?: StepMirror;
  /** Your model: wrapped so that each attempt (the SDK's retries included) is checked, recorded and charged. */
  model?: LanguageModel;
  /** Your tools: wrapped so that each call is checked against the budgets before it runs, and recorded. */
  tools?: ToolSet;
  /** The loop's step limit, in `settings.stopWhen` beside the budget stop. Default 20. */
  maxSteps?: number;
  /** The SDK's own retries of a failed model call, set in `settings` (each attempt is recorded). Default 2. */
  maxRetries?: number;
  /** Write the history (and journal) to this JSON Lines file. `close()` closes it. */
  historyFile?: string;
  historyOptions?: JsonlHistorySinkOptions;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a loop over any tool set, as the SDK's own stop conditions are
type AnyTools = any;

/** What to spread into `generateText`, `streamText` or a `ToolLoopAgent`. */
export interface AISDKMirrorSettings {
  /** The wrapped model, when `options.model` was given. */
  model?: LanguageModel;
  /** The wrapped tools, when `options.tools` was given. */
  tools?: ToolSet;
  /** The mirror's signal (ToolLoopAgent takes it per call: `agent.generate({ prompt, abortSignal: m.signal })`). */
  abortSignal: AbortSignal;
  maxRetries: number;
  /** The step limit and the budget stop. Combine with yours: `stopWhen: [yourCondition, m.stopWhen]`. */
  stopWhen: Array<StopCondition<AnyTools>>;
  /** Starts the run (AI SDK 6's name; 7 takes it as an alias of `onStart`). */
  experimental_onStart: (event: unknown) => void;
  onStart: (event: unknown) => void;
  /** Keeps each step's messages (6's name; 7's is `onStepEnd`). */
  onStepFinish: (step: StepResult<AnyTools>) => void;
  onStepEnd: (step: StepResult<AnyTools>) => void;
  /** Ends the run (7 takes it as an alias of `onEnd`). */
  onFinish: (event: { text?: string }) => void;
  /** streamText: a failed stream ends the run in Error. */
  onError: (event: { error: unknown }) => void;
  /** streamText: an aborted stream ends the run as cancelled. */
  onAbort: () => void;
}

/** The settings with the model and tools the options gave, typed as given. */
export type AISDKMirrorSettingsFor<O> = AISDKMirrorSettings &
  (O extends { model: infer M } ? (undefined extends M ? unknown : { model: M }) : unknown) &
  (O extends { tools: infer T } ? (undefined extends T ? unknown : { tools: T }) : unknown);

/** The mirror on an AI SDK loop: settings to spread, wrappers, and what the run did. */
export interface AISDKMirror<O = MirrorAISDKOptions> {
  readonly mirror: StepMirror;
  readonly settings: AISDKMirrorSettingsFor<O>;
  /** Wraps a model (any LanguageModel object; not an id string). */
  model<M extends LanguageModel>(model: M): M;
  /** Wraps tools; tools without `execute` are kept as they are. */
  tools<T extends ToolSet>(tools: T): T;
  /** Stops the loop once a budget is spent or the run was stopped: add it to your own `stopWhen`. */
  readonly stopWhen: StopCondition<AnyTools>;
  readonly signal: AbortSignal;
  /**
   * The run's response messages (assistant and tool), every tool call answered: when the loop
   * stopped in a step that never finished, its calls are answered with `interrupted: …` /
   * `not run: …` error results. Append them to your conversation to go on.
   */
  readonly messages: ModelMessage[];
  /** How the last run ended, once it has. */
  readonly result: TurnResult | undefined;
  /** Cancels the running loop through its signal. */
  cancel(reason?: string): boolean;
  /**
   * Ends the run from outside: with the error `generateText` rejected with, or none after it
   * resolved. Needed only where no callback of the SDK reports the end (your own `onFinish`
   * replaced the mirror's); later ends of the same run return the same result.
   */
  end(error?: unknown): TurnResult;
  /** Closes the history file, if `historyFile` opened one. */
  close(): void;
}

/** A signal that never aborts, for a call the SDK gave none. */
const NEVER = new AbortController().signal;

/** Counts a streamed part's output against the request's bound (text, reasoning and tool input as they arrive). */
function watchPart(watch: OutputBoundWatch, part: { type: string; [key: string]: unknown }): void {
  if (part.type === 'text-delta' || part.type === 'reasoning-delta' || part.type === 'tool-input-delta') {
    const delta = typeof part.delta === 'string' ? part.delta : part.textDelta;
    if (typeof delta === 'string') watch.add(delta);
  }
  // The finish part's usage is not counted here: the response is whole by then, so it is charged
  // at the usage it reports, and one past its bound is a `boundExceeded` fact, as for the other
  // mirrors; a cut there would charge only the hold, less than the server billed.
}

/**
 * Puts the mirror on an AI SDK loop you keep — `generateText`, `streamText`, `ToolLoopAgent`, in
 * AI SDK 6 and 7 — with the settings to spread and the model and tools wrapped: every model
 * attempt (the SDK's own retries included) and tool call goes through the sixteen states, into
 * the history file (and journal), checked against the budgets before it starts. A spent budget
 * refuses the tool call (the LLM sees `not run: …`) and `stopWhen` then ends the loop the SDK's
 * way, every tool call answered; a model call a budget forbids is refused with
 * `BudgetExceededError`. A streamed call is cut at its `maxOutputTokens`, whether the provider
stops there or not, and charged at its hold. Cancel through `signal` (or `cancel()`).
 *
 * ```ts
 * const m = mirrorAISDK({ model: openai('gpt-4.1'), tools, budget: { maxCostUsd: 0.5 }, pricing, historyFile: 'run.jsonl' });
 * const result = await generateText({ ...m.settings, prompt, maxOutputTokens: 2000 }); // a strict cap needs it
 * m.close();
 * ```
 */
export function mirrorAISDK<O extends MirrorAISDKOptions>(options: O = {} as O): AISDKMirror<O> {
  if (typeof options !== 'object' || options === null)
    throw new InvalidArgumentError('options', 'an object of mirror options', options);
  const {
    mirror: given,
    model,
    tools,
    maxSteps = 20,
    maxRetries = 2,
    historyFile,
    historyOptions,
    ...mirrorOptions
  } = options;
  if (given !== undefined && !(given instanceof StepMirror))
    throw new InvalidArgumentError('mirror', 'a StepMirror', given);
  if (!(Number.isInteger(maxSteps) && maxSteps >= 1))
    throw new InvalidArgumentError('maxSteps', 'a positive integer', maxSteps);
  if (!(Number.isInteger(maxRetries) && maxRetries >= 0))
    throw new InvalidArgumentError('maxRetries', 'a non-negative integer', maxRetries);
  let sink: JsonlHistorySink | undefined;
  if (historyFile !== undefined) {
    if (given !== undefined)
      throw new InvalidArgumentError(
        'historyFile',
        'no history file when a mirror is given (its sink is set)',
        historyFile,
      );
    sink = JsonlHistorySink.open(historyFile, historyOptions);
  }
  // The wrapped model rewrites a call into the final one and adds the budget note: both honoured.
  const mirror = StepMirror.fromOptions(
    sink === undefined ? { ...mirrorOptions, mirror: given } : { ...mirrorOptions, sink },
    'mirrorAISDK()',
    { honours: { wrapUp: true, budgetNote: true } },
  );

  /** Response messages of the last finished step (cumulative over the run's steps). */
  let stepMessages: ModelMessage[] = [];
  let lastRun = 0;
  /** The tool calls of the last response, for answering a step that never finished. */
  let lastCalls: Array<{ id: string; name: string; input: unknown }> = [];
  let lastText: string | undefined;
  /** Model failures in a row: the SDK retries a retryable one while there are retries left. */
  let failuresInRow = 0;
  /** A streamed model call whose response is not reported yet. */
  let streaming: Promise<void> | undefined;

  /** A new run of the mirror (started here, by the SDK's start event, or by a batch) starts this wrapper's records afresh. */
  const sync = (): void => {
    if (lastRun === mirror.turn) return;
    stepMessages = [];
    lastCalls = [];
    lastText = undefined;
    failuresInRow = 0;
    lastRun = mirror.turn;
  };
  const ensureRun = (input: string): void => {
    if (!mirror.running) mirror.runStart(input);
    sync();
  };

  const attempt = async <R>(
    o: CallOptions,
    modelId: string | undefined,
    call: (sent: CallOptions) => PromiseLike<R>,
  ): Promise<R> => {
    ensureRun(lastUserText(o.prompt));
    // The bound is only worked out when the mirror needs it (a strict or external dollar cap,
    // the final call's hold), of the call as the flags would send it.
    const planned = await mirror.modelCallPlan((flags) => callBound(withFlags(o, flags), modelId));
    if (planned instanceof Error) throw planned;
    try {
      return await call(withFlags(o, planned));
    } catch (error) {
      failed(error);
      throw error;
    }
  };
  const failed = (error: unknown): void => {
    if (!mirror.running) return;
    if (mirror.signal.aborted) {
      mirror.runAborted();
      return;
    }
    failuresInRow += 1;
    const retryable = APICallError.isInstance(error) && error.isRetryable;
    mirror.modelCallFailed(error, { willRetry: retryable && failuresInRow <= maxRetries });
  };
  const responded = (result: ModelCallResult, modelId: string | undefined): void => {
    const response = modelResponseOf(result, modelId);
    kept(response);
    mirror.modelResponse(response);
  };
  const kept = (response: MirrorResponse): void => {
    failuresInRow = 0;
    lastCalls = (response.toolCalls ?? []).map((c) => ({ id: c.id, name: c.name, input: c.input }));
    lastText = response.text;
  };
  /** A resumed run: the journaled response of this call, when the mirror serves one (no request is made). */
  const recorded = (o: CallOptions): MirrorResponse | undefined => {
    ensureRun(lastUserText(o.prompt));
    const response = mirror.recordedResponse();
    if (response !== undefined) kept(response);
    return response;
  };

  const wrapModel = <M extends LanguageModel>(m: M): M => {
    if (typeof m !== 'object' || m === null || typeof (m as { doGenerate?: unknown }).doGenerate !== 'function')
      throw new InvalidArgumentError('model', "a language model object (a provider's model, not an id string)", m);
    const inner = m as unknown as {
      modelId?: string;
      specificationVersion?: unknown;
      doGenerate(o: CallOptions): PromiseLike<ModelCallResult>;
      doStream(o: CallOptions): PromiseLike<{ stream: ReadableStream<{ type: string }> }>;
    };
    const doGenerate = async (o: CallOptions): Promise<ModelCallResult> => {
      const served = recorded(o);
      if (served !== undefined) return recordedResult(served, inner.specificationVersion);
      const result = await attempt(o, inner.modelId, (sent) => inner.doGenerate(sent));
      responded(result, inner.modelId);
      return result;
    };
    const doStream = async (o: CallOptions): Promise<{ stream: ReadableStream<{ type: string }> }> => {
      const served = recorded(o);
      if (served !== undefined) return { stream: recordedStream(served, inner.specificationVersion) };
      // The stream is cut at the request's max output tokens, whether the provider stops there or
      // not: what it may bill stays within the call's hold.
      const max = typeof o.maxOutputTokens === 'number' ? o.maxOutputTokens : undefined;
      const watch = watchOutputBound(max, o.abortSignal ?? NEVER);
      const result = await attempt(o, inner.modelId, (sent) =>
        inner.doStream(max === undefined ? sent : { ...sent, abortSignal: watch.signal }),
      );
      const collector = new StreamCollector();
      let cut: unknown;
      // The SDK starts a streamed call's tools as their parts arrive, before the usage at the
      // end: they wait until the response is reported, so the moves keep the table's order.
      let reported!: () => void;
      streaming = new Promise<void>((resolve) => (reported = resolve));
      // A stream cancelled by an abort never flushes: its waiting tools go on to meet the abort.
      mirror.signal.addEventListener('abort', () => reported(), { once: true });
      const stream = result.stream.pipeThrough(
        new TransformStream<{ type: string }, { type: string }>({
          transform(part, controller) {
            if (cut !== undefined) return;
            const p = part as { type: string; [key: string]: unknown };
            try {
              watchPart(watch, p);
            } catch (error) {
              // Charged at its hold and not retried (the server does not stop at max tokens).
              cut = error;
              failed(error);
              streaming = undefined;
              reported();
              controller.error(error);
              return;
            }
            collector.add(p);
            controller.enqueue(part);
          },
          flush() {
            if (cut !== undefined) return;
            if (collector.error !== undefined) failed(collector.error);
            else if (collector.finished) responded(collector.result(), inner.modelId);
            streaming = undefined;
            reported();
          },
        }),
      );
      return { ...result, stream };
    };
    return Object.create(m as object, {
      doGenerate: { value: doGenerate, enumerable: true, writable: true, configurable: true },
      doStream: { value: doStream, enumerable: true, writable: true, configurable: true },
    }) as M;
  };

  const wrapTools = <T extends ToolSet>(t: T): T => {
    if (typeof t !== 'object' || t === null)
      throw new InvalidArgumentError('tools', 'a record of tool() definitions', t);
    return Object.fromEntries(
      Object.entries(t).map(([name, def]) => {
        const execute = def.execute;
        if (execute === undefined) return [name, def];
        const guarded: typeof execute = async (input, ctx) => {
          const id = ctx.toolCallId;
          if (streaming !== undefined) await streaming;
          // A resumed run: a call of a served response is answered from the journal (by the tool policy), not run.
          const answer = mirror.recordedTool({ id, name, input });
          if (answer?.isError === true) throw new Error(answer.output);
          if (answer !== undefined) return answer.output as Awaited<ReturnType<typeof execute>>;
          const stop = await mirror.toolStart({ id, name, input });
          if (stop !== undefined) throw stop;
          try {
            const output: unknown = await execute(input, ctx);
            mirror.toolEnd(id, { output: typeof output === 'string' ? output : safeStringify(output ?? null) });
            return output;
          } catch (error) {
            mirror.toolEnd(id, { error });
            throw error;
          }
        };
        return [name, { ...def, execute: guarded }];
      }),
    ) as T;
  };

  const stopWhen: StopCondition<AnyTools> = () =>
    !mirror.running || mirror.signal.aborted || mirror.spent() !== undefined;
  const stepLimit: StopCondition<AnyTools> = ({ steps }) => steps.length >= maxSteps;
  const seen = new WeakSet<object>();
  const onStepEnd = (step: StepResult<AnyTools>): void => {
    if (seen.has(step)) return;
    seen.add(step);
    const messages = step.response?.messages;
    if (Array.isArray(messages)) stepMessages = [...messages];
    mirror.stepEnd();
  };
  const onStart = (event: unknown): void => {
    const e = (event ?? {}) as { prompt?: unknown; messages?: unknown };
    // A run that went past its first model call without reporting its end is ended in Error by the mirror.
    mirror.runStart(typeof e.prompt === 'string' ? e.prompt : lastUserText(e.messages ?? e.prompt));
    sync();
  };

  const settings: AISDKMirrorSettings = {
    abortSignal: mirror.signal,
    maxRetries,
    stopWhen: [stepLimit, stopWhen],
    experimental_onStart: onStart,
    onStart,
    onStepFinish: onStepEnd,
    onStepEnd,
    onFinish: (event) => void mirror.runEnd(typeof event?.text === 'string' ? { text: event.text } : {}),
    onError: (event) => void mirror.runFailed(event?.error),
    onAbort: () => void mirror.runAborted(),
  };
  if (model !== undefined) settings.model = wrapModel(model);
  if (tools !== undefined) settings.tools = wrapTools(tools);

  return {
    mirror,
    get settings() {
      // The signal of the run to come: a cancelled run's successor gets a fresh one.
      settings.abortSignal = mirror.signal;
      return settings as AISDKMirrorSettingsFor<O>;
    },
    model: wrapModel,
    tools: wrapTools,
    stopWhen,
    get signal() {
      return mirror.signal;
    },
    get messages() {
      return answered(stepMessages, mirror.turn === lastRun ? mirror.result : undefined, lastCalls, lastText);
    },
    get result() {
      return mirror.result;
    },
    cancel: (reason) => mirror.cancel(reason),
    end: (error) => {
      if (!mirror.running) return mirror.result ?? mirror.runFailed(error ?? new Error('the run never started'));
      return error === undefined ? mirror.runEnd() : mirror.runFailed(error);
    },
    close: () => sink?.close(),
  };
}

/**
 * The run's messages with every tool call answered: the calls of a step that never finished
 * (the loop was stopped during its tools) get their assistant message and error results.
 */
function answered(
  messages: ModelMessage[],
  result: TurnResult | undefined,
  calls: ReadonlyArray<{ id: string; name: string; input: unknown }>,
  text: string | undefined,
): ModelMessage[] {
  const unanswered = result?.unansweredToolCalls;
  if (unanswered === undefined || unanswered.length === 0) return messages;
  const answeredIds = new Set<string>();
  for (const m of messages)
    if (m.role === 'tool')
      for (const part of m.content) if (part.type === 'tool-result') answeredIds.add(part.toolCallId);
  const missing = unanswered.filter((u) => !answeredIds.has(u.call.id));
  if (missing.length === 0) return messages;
  const missingIds = new Set(missing.map((u) => u.call.id));
  const stepCalls = calls.filter((c) => missingIds.has(c.id));
  const assistant: ModelMessage = {
    role: 'assistant',
    content: [
      ...(text === undefined || text === '' ? [] : [{ type: 'text' as const, text }]),
      ...stepCalls.map((c) => ({ type: 'tool-call' as const, toolCallId: c.id, toolName: c.name, input: c.input })),
    ],
  };
  const tool: ModelMessage = {
    role: 'tool',
    content: missing.map((u) => ({
      type: 'tool-result' as const,
      toolCallId: u.call.id,
      toolName: u.call.name,
      output: { type: 'error-text' as const, value: u.result.output },
    })),
  };
  return [...messages, assistant, tool];
}

/**
 * The bound of one model call, from the options the SDK hands the model: the prompt (system
 * messages included), the tool definitions (their JSON Schemas) and the response format,
 * serialized, bound the input tokens (`requestTokenBound`); `maxOutputTokens` bounds the
 * output. Without `maxOutputTokens` the output has no bound: says why, for the refusal.
 */
function callBound(o: CallOptions, model: string | undefined): LLMCallBound | string {
  const max = o.maxOutputTokens;
  if (!(typeof max === 'number' && Number.isSafeInteger(max) && max >= 0))
    return max === undefined
      ? "the call sets no maxOutputTokens, so its output (and its cost) has no bound: pass maxOutputTokens to generateText, streamText or the ToolLoopAgent's settings"
      : `its maxOutputTokens is ${String(max)}, not a non-negative integer`;
  const prompt = Array.isArray(o.prompt) ? o.prompt : [];
  const tools = Array.isArray(o.tools) ? o.tools : [];
  const body = { prompt: o.prompt, tools: o.tools, toolChoice: o.toolChoice, responseFormat: o.responseFormat };
  const bound: LLMCallBound = {
    inputTokens: requestTokenBound(body, prompt.length, tools.length),
    maxOutputTokens: max,
  };
  if (model !== undefined) bound.model = model;
  return bound;
}

/** The text of the last user message of a prompt (model-level or SDK-level messages), for the history. */
function lastUserText(prompt: unknown): string {
  if (typeof prompt === 'string') return prompt;
  if (!Array.isArray(prompt)) return '';
  for (let i = prompt.length - 1; i >= 0; i--) {
    const m = prompt[i] as { role?: unknown; content?: unknown };
    if (m?.role !== 'user') continue;
    if (typeof m.content === 'string') return m.content;
    if (Array.isArray(m.content))
      return m.content
        .map((p: { type?: unknown; text?: unknown }) =>
          p?.type === 'text' && typeof p.text === 'string' ? p.text : '',
        )
        .join('');
  }
  return '';
}
