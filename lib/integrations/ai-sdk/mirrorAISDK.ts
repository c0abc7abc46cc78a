import { type LanguageModel, type ModelMessage, type StepResult, type StopCondition, type ToolSet } from 'ai';
import { InvalidArgumentError, StepMirror, type StepMirrorOptions, type TurnResult } from 'agent-state-machine';
import { JsonlHistorySink, type JsonlHistorySinkOptions } from 'agent-state-machine/history';
import { AISDKRun } from './AISDKRun';
import { wrapAISDKModel } from './wrapAISDKModel';
import { wrapAISDKTools } from './wrapAISDKTools';

/** Whether a tool of `tools` may ask for approval (`needsApproval` set, not false). */
function asksApproval(tools: ToolSet | undefined): boolean {
  return Object.values(tools ?? {}).some((t) => {
    const needs = (t as { needsApproval?: unknown } | undefined)?.needsApproval;
    return needs !== undefined && needs !== false;
  });
}

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
  /**
   * When the SDK stopped for tool approvals (a tool's `needsApproval`), the run waits in
   * AwaitingApproval, not ended: this resolves, once every call has its answer (`mirror.approvals`
   * approve/deny, a batch's `onApproval`, `agent-sm approve`), with the messages to append to
   * your conversation (the call's response messages and the `tool-approval-response` tool
   * message); call the SDK again with them and the same run goes on. Undefined when the run does
   * not wait (it ended, or was cancelled while it waited).
   */
  answered(): Promise<ModelMessage[] | undefined>;
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
  // A tool that needs approval parks the run: the mirror's table has the approval states.
  if (given === undefined && mirrorOptions.approvals === undefined && asksApproval(tools))
    mirrorOptions.approvals = true;
  // The wrapped model rewrites a call into the final one and adds the budget note: both honoured.
  const mirror = StepMirror.fromOptions(
    sink === undefined ? { ...mirrorOptions, mirror: given } : { ...mirrorOptions, sink },
    'mirrorAISDK()',
    { honours: { wrapUp: true, budgetNote: true } },
  );

  const run = new AISDKRun(mirror, maxRetries);
  const wrapModel = <M extends LanguageModel>(m: M): M => wrapAISDKModel(m, run);
  const wrapTools = <T extends ToolSet>(t: T): T => wrapAISDKTools(t, run);
  const stopWhen: StopCondition<AnyTools> = () =>
    !mirror.running || mirror.signal.aborted || mirror.spent() !== undefined;
  const stepLimit: StopCondition<AnyTools> = ({ steps }) => steps.length >= maxSteps;
  const onStepEnd = (step: StepResult<AnyTools>): void => run.stepEnded(step);
  const onStart = (event: unknown): void => run.started(event);

  const settings: AISDKMirrorSettings = {
    abortSignal: mirror.signal,
    maxRetries,
    stopWhen: [stepLimit, stopWhen],
    experimental_onStart: onStart,
    onStart,
    onStepFinish: onStepEnd,
    onStepEnd,
    onFinish: (event) => run.finished(event),
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
      return run.messages;
    },
    get result() {
      return mirror.result;
    },
    answered: () => run.answered(),
    cancel: (reason) => mirror.cancel(reason),
    end: (error) => {
      if (!mirror.running) return mirror.result ?? mirror.runFailed(error ?? new Error('the run never started'));
      return error === undefined ? mirror.runEnd() : mirror.runFailed(error);
    },
    close: () => sink?.close(),
  };
}
