import type { PrepareStepFunction, StepResult, StopCondition, ToolSet } from 'ai';
import {
  Budget,
  BudgetExceededError,
  InvalidArgumentError,
  OperationError,
  type ExternalBudget,
  type Pricing,
  type SpentLimit,
  type UsageTotals,
} from 'agent-state-machine';
import { assertPricing, priceUsage, UsageMeter } from 'agent-state-machine/internal';
import { responseUsage } from '../../internal/fieldLists';
import { usageFromAISDK } from './usageFromAISDK';

/** Options of `budgetFor(budgets, options)`. */
export interface BudgetForOptions {
  /** Prices a step from its tokens and model id, when you cap dollars (`maxCostUsd`). */
  pricing?: Pricing;
  /**
   * A step whose cost is unknown (no `pricing`, or it returned `undefined`) while a budget caps
   * dollars: `'error'` (default) makes the loop throw before its next step, `'ignore'` charges $0.
   */
  onUnknownCost?: 'error' | 'ignore';
  /** Your own abort signal, merged into `abortSignal`. */
  signal?: AbortSignal;
  /** Epoch milliseconds, for the wall time charged. Default `Date.now`. */
  clock?: () => number;
}

/**
 * Settings to spread into `generateText`, `streamText` or a `ToolLoopAgent`, charging budgets step
 * by step. Keep your own `stopWhen` and step callback by combining: `stopWhen: [isStepCount(20),
 * guard.stopWhen]` (`stepCountIs` in AI SDK 6), and call `guard.onStepEnd(step)` from your
 * `onStepEnd` (`guard.onStepFinish(step)` from your `onStepFinish` in AI SDK 6).
 */
export interface AISDKBudgetGuard {
  /** Stops the loop once a budget is spent (checked after each step that ran tools). Throws for an unknown cost under a dollar cap. */
  stopWhen: StopCondition<AnyTools>;
  /** Charges a finished step: tokens, cost, one LLM call, the tool calls it ran, the wall time. AI SDK 6's name for the step callback. */
  onStepFinish: (step: StepResult<AnyTools>) => void;
  /**
   * The same as `onStepFinish`, under AI SDK 7's name. 7 calls only `onStepEnd` when both are
   * given and 6 knows only `onStepFinish`, so spreading the guard charges each step with either;
   * a step is never charged twice, whichever of the guard's callbacks see it.
   */
  onStepEnd: (step: StepResult<AnyTools>) => void;
  /**
   * Before each step: throws `BudgetExceededError` when a budget is already spent, else counts the
   * LLM call. Before the first, it also counts the calls AI SDK 7 ran on a user's approval.
   */
  prepareStep: PrepareStepFunction<AnyTools>;
  /** Aborts at the earliest `maxWallMs` deadline of the budgets, or when `options.signal` does. */
  abortSignal: AbortSignal;
  /**
   * Your tools with each `execute` checking the budgets first: a call made once a budget is spent
   * (`maxToolCalls` included, even among the parallel calls of one step) is refused with an error
   * result and never runs. Every call is counted when it starts.
   */
  wrapTools<T extends ToolSet>(tools: T): T;
  /** What this guard has charged so far. */
  readonly usage: UsageTotals;
  /** The first spent limit this guard saw, if any: why the loop stopped. */
  readonly stopped: SpentLimit | undefined;
  /** Clears the deadline timer and lets go of `options.signal`; call it when the loop has ended (the timer never keeps the process alive). */
  dispose(): void;
}

type AnyBudget = Budget | ExternalBudget;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any tools, as the SDK's own `stepCountIs` has: these fit a loop over any tool set
type AnyTools = any;

/**
 * Puts this library's budgets on an AI SDK loop you keep (`generateText` with `stopWhen`,
 * `streamText`, `ToolLoopAgent`): every step is charged to each budget — an agent's own, a
 * batch's shared in-memory pool, an `ExternalBudget` in Redis — and the loop stops when one is
 * spent. It records usage, not the sixteen states: there is no per-state history, no retry
 * accounting (the SDK's `maxRetries` retries uncounted), and a step's cost is known only after
 * it, so spend can pass a cap by one step. Use `fromAISDK` with `AgentWithStateMachine` for all that.
 *
 * ```ts
 * const guard = budgetFor(new Budget({ maxCostUsd: 0.5 }), { pricing });
 * const { prepareStep, stopWhen, onStepEnd, abortSignal } = guard;
 * // AI SDK 7; with 6, stepCountIs and onStepFinish (spreading `...guard` passes both names).
 * await generateText({ model, tools: guard.wrapTools(tools), prompt, prepareStep, stopWhen: [isStepCount(20), stopWhen], onStepEnd, abortSignal });
 * ```
 */
export function budgetFor(budgets: AnyBudget | readonly AnyBudget[], options: BudgetForOptions = {}): AISDKBudgetGuard {
  const list = checkBudgets(budgets);
  const { pricing, onUnknownCost = 'error', signal, clock = Date.now } = checkBudgetForOptions(options);

  const local = list.filter((b): b is Budget => b instanceof Budget);
  const external = list.filter((b): b is ExternalBudget => !(b instanceof Budget));
  const capsDollars = local.some((b) => b.limits.maxCostUsd !== undefined);
  const charged = new WeakSet<object>();
  const handledTools = new Set<string>();
  let reservedLlm = 0;
  let stopped: SpentLimit | undefined;
  let unknownCost: string | undefined;

  const note = <T extends SpentLimit | OperationError | undefined>(limit: T): T => {
    if (limit !== undefined && !(limit instanceof OperationError) && stopped === undefined) stopped = limit;
    return limit;
  };
  const controller = new AbortController();
  const forward = (): void => controller.abort(signal?.reason);
  if (signal?.aborted === true) forward();
  else signal?.addEventListener('abort', forward, { once: true });
  const abortSignal = controller.signal;
  // The library's one meter: wall time, every budget, and the maxWallMs deadline that aborts a hanging step.
  const meter = new UsageMeter({
    budgets: local,
    external,
    clock,
    onDeadline: (spent) => controller.abort(budgetError(note(spent))),
  });
  meter.start();
  /** Throws what stops the loop: an external budget that failed, or a spent limit (`prefix` before its message). */
  const refuse = (limit: SpentLimit | OperationError | undefined, prefix = ''): void => {
    if (limit instanceof OperationError) throw limit;
    if (limit !== undefined) throw budgetError(limit, prefix);
  };
  const spentLocal = (): SpentLimit | undefined => note(meter.spent());

  const chargeStep = async (step: StepResult<AnyTools>): Promise<void> => {
    if (charged.has(step)) return;
    charged.add(step);
    const usage = usageFromAISDK(step.usage);
    const model = step.response?.modelId;
    // Priced as the adapter prices a response: the reported cost, else pricing's, checked.
    const { costUsd, error } = priceUsage(usage, model, pricing);
    if (error !== undefined) unknownCost = error.message;
    else if (costUsd === undefined && capsDollars && onUnknownCost === 'error') {
      unknownCost = `a step of model ${model ?? '(unknown)'} cost an unknown amount (${usage.inputTokens ?? '?'} input, ${usage.outputTokens ?? '?'} output tokens) under a maxCostUsd budget: pass budgetFor(…, { pricing }) that prices this model, or onUnknownCost: 'ignore'`;
    }
    const ran = toolsRan(step, handledTools);
    const llmCalls = reservedLlm > 0 ? 0 : 1;
    if (reservedLlm > 0) reservedLlm -= 1;
    // An ExternalBudget counts calls when they are reserved; what was not reserved is charged here, with the wall time.
    meter.charge({ ...responseUsage(usage, costUsd), llmCalls, toolCalls: ran });
    refuse(note(await meter.flush()));
    spentLocal();
  };

  // AI SDK 7 runs the calls a user approved (a `tool-approval-response` in the messages) before the
  // first step: their results are in no step, only in the first prepareStep's `responseMessages`.
  // Denied calls (`execution-denied`) never ran; wrapped tools were counted when they started.
  const chargeApproved = async (messages: unknown): Promise<void> => {
    if (!Array.isArray(messages)) return;
    const ran = messages
      .flatMap((m: { role?: unknown; content?: unknown }) =>
        m?.role === 'tool' && Array.isArray(m.content) ? m.content : [],
      )
      .filter(
        (p: { type?: unknown; toolCallId?: unknown; output?: { type?: unknown } }) =>
          p?.type === 'tool-result' && p.output?.type !== 'execution-denied' && !handledTools.has(String(p.toolCallId)),
      ).length;
    if (ran === 0) return;
    meter.charge({ toolCalls: ran });
    refuse(note(await meter.flush()));
  };

  const stopWhen: StopCondition<AnyTools> = async ({ steps }) => {
    for (const step of steps) await chargeStep(step);
    if (unknownCost !== undefined) throw new Error(unknownCost);
    return spentLocal() !== undefined || stopped !== undefined;
  };

  const prepareStep: PrepareStepFunction<AnyTools> = async (options) => {
    const { steps } = options;
    for (const step of steps) await chargeStep(step);
    if (steps.length === 0) await chargeApproved((options as { responseMessages?: unknown }).responseMessages);
    if (unknownCost !== undefined) throw new Error(unknownCost);
    refuse(spentLocal() ?? stopped);
    // Counted when the call starts, so maxLlmCalls is never passed.
    if (meter.hasExternal) refuse(note(await meter.reserve('llm')));
    meter.charge({ llmCalls: 1 }, false);
    reservedLlm += 1;
    return undefined;
  };

  const wrapTools = <T extends ToolSet>(tools: T): T => {
    if (typeof tools !== 'object' || tools === null)
      throw new InvalidArgumentError('tools', 'a record of tool() definitions', tools);
    return Object.fromEntries(
      Object.entries(tools).map(([name, t]) => {
        const execute = t.execute;
        if (execute === undefined) return [name, t];
        const guarded: typeof execute = async (input, ctx) => {
          // Known to this guard from here on: counted below if it runs, never if refused.
          handledTools.add(ctx.toolCallId);
          refuse(spentLocal() ?? stopped, 'not run: ');
          if (meter.hasExternal) refuse(note(await meter.reserve('tool')), 'not run: ');
          meter.charge({ toolCalls: 1 }, false);
          return execute(input, ctx);
        };
        return [name, { ...t, execute: guarded }];
      }),
    ) as T;
  };

  const onStepEnd = (step: StepResult<AnyTools>): void => {
    // The SDK ignores what a step callback throws or resolves; charging is synchronous for
    // in-memory budgets, and an ExternalBudget's charge is awaited by stopWhen/prepareStep.
    void chargeStep(step).catch(() => {});
  };

  return {
    stopWhen,
    onStepFinish: onStepEnd,
    onStepEnd,
    prepareStep,
    abortSignal,
    wrapTools,
    get usage() {
      return meter.usage;
    },
    get stopped() {
      return stopped;
    },
    dispose: () => {
      meter.stop();
      signal?.removeEventListener('abort', forward);
    },
  };
}

function checkBudgets(budgets: unknown): AnyBudget[] {
  const list = Array.isArray(budgets) ? budgets : [budgets];
  if (list.length === 0)
    throw new InvalidArgumentError('budgets', 'a Budget, an ExternalBudget, or a non-empty array of them', budgets);
  list.forEach((b, i) => {
    const isExternal =
      typeof b === 'object' &&
      b !== null &&
      typeof (b as ExternalBudget).reserve === 'function' &&
      typeof (b as ExternalBudget).charge === 'function';
    if (!(b instanceof Budget) && !isExternal)
      throw new InvalidArgumentError(
        Array.isArray(budgets) ? `budgets[${i}]` : 'budgets',
        'a Budget or an ExternalBudget { reserve, charge }',
        b,
      );
  });
  return list as AnyBudget[];
}

function budgetError(limit: SpentLimit, prefix = ''): BudgetExceededError {
  return new BudgetExceededError(`${prefix}${limit.message}`, limit.limit, limit.used, limit.max);
}

/** `budgetFor`'s options, each checked by name. */
function checkBudgetForOptions(options: BudgetForOptions): BudgetForOptions {
  if (typeof options !== 'object' || options === null)
    throw new InvalidArgumentError('options', 'an object { pricing?, onUnknownCost?, signal?, clock? }', options);
  const { pricing, onUnknownCost = 'error', signal, clock = Date.now } = options;
  assertPricing(pricing);
  if (onUnknownCost !== 'error' && onUnknownCost !== 'ignore')
    throw new InvalidArgumentError('onUnknownCost', "'error' or 'ignore'", onUnknownCost);
  if (signal !== undefined && !(signal instanceof AbortSignal))
    throw new InvalidArgumentError('signal', 'an AbortSignal', signal);
  if (typeof clock !== 'function')
    throw new InvalidArgumentError('clock', 'a function returning epoch milliseconds', clock);
  return options;
}

/**
 * The tool calls a step ran that `wrapTools` did not count or refuse when they started: not the
 * invalid ones (never executed) nor the provider's.
 */
function toolsRan(step: StepResult<AnyTools>, handledTools: ReadonlySet<string>): number {
  const invalid = new Set(
    step.content.flatMap((p) => (p.type === 'tool-call' && 'invalid' in p && p.invalid === true ? [p.toolCallId] : [])),
  );
  return step.content.filter(
    (p) =>
      (p.type === 'tool-result' || p.type === 'tool-error') &&
      p.providerExecuted !== true &&
      !invalid.has(p.toolCallId) &&
      !handledTools.has(p.toolCallId),
  ).length;
}
