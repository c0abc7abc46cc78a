import type { PrepareStepFunction, StepResult, StopCondition, ToolSet } from 'ai';
import {
  Budget,
  BudgetExceededError,
  formatDuration,
  InvalidArgumentError,
  type ExternalBudget,
  type Pricing,
  type SpentLimit,
  type UsageDelta,
  type UsageTotals,
} from 'agent-state-machine';
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
 * by step. Keep your own `stopWhen`/`onStepFinish` by combining: `stopWhen: [stepCountIs(20),
 * guard.stopWhen]`, and call `guard.onStepFinish(step)` from yours.
 */
export interface AISDKBudgetGuard {
  /** Stops the loop once a budget is spent (checked after each step that ran tools). Throws for an unknown cost under a dollar cap. */
  stopWhen: StopCondition<AnyTools>;
  /** Charges a finished step: tokens, cost, one LLM call, the tool calls it ran, the wall time. */
  onStepFinish: (step: StepResult<AnyTools>) => void;
  /** Before each step: throws `BudgetExceededError` when a budget is already spent, else counts the LLM call. */
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

// `any` tools, as the SDK's own `stepCountIs` has: these fit a loop over any tool set.
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
 * const { prepareStep, stopWhen, onStepFinish, abortSignal } = guard;
 * await generateText({ model, tools: guard.wrapTools(tools), prompt, prepareStep, stopWhen: [stepCountIs(20), stopWhen], onStepFinish, abortSignal });
 * ```
 */
export function budgetFor(budgets: AnyBudget | readonly AnyBudget[], options: BudgetForOptions = {}): AISDKBudgetGuard {
  const list = checkBudgets(budgets);
  if (typeof options !== 'object' || options === null) throw new InvalidArgumentError('options', 'an object { pricing?, onUnknownCost?, signal?, clock? }', options);
  const { pricing, onUnknownCost = 'error', signal, clock = Date.now } = options;
  if (pricing !== undefined && typeof pricing !== 'function') throw new InvalidArgumentError('pricing', 'a function (usage, { model }) => number | undefined', pricing);
  if (onUnknownCost !== 'error' && onUnknownCost !== 'ignore') throw new InvalidArgumentError('onUnknownCost', "'error' or 'ignore'", onUnknownCost);
  if (signal !== undefined && !(signal instanceof AbortSignal)) throw new InvalidArgumentError('signal', 'an AbortSignal', signal);
  if (typeof clock !== 'function') throw new InvalidArgumentError('clock', 'a function returning epoch milliseconds', clock);

  const local = list.filter((b): b is Budget => b instanceof Budget);
  const external = list.filter((b): b is ExternalBudget => !(b instanceof Budget));
  const capsDollars = local.some((b) => b.limits.maxCostUsd !== undefined);
  const own = new Budget({}, { label: 'this loop' });
  const charged = new WeakSet<object>();
  const handledTools = new Set<string>();
  let reservedLlm = 0;
  let since = clock();
  let stopped: SpentLimit | undefined;
  let unknownCost: string | undefined;

  const note = (limit: SpentLimit | undefined): SpentLimit | undefined => {
    if (limit !== undefined && stopped === undefined) stopped = limit;
    return limit;
  };
  const controller = new AbortController();
  const forward = (): void => controller.abort(signal?.reason);
  if (signal?.aborted === true) forward();
  else signal?.addEventListener('abort', forward, { once: true });
  const abortSignal = controller.signal;
  const timer = deadlineTimer(local, (error) => {
    note({ limit: 'maxWallMs', used: error.used, max: error.max, message: error.message });
    controller.abort(error);
  });
  const spentLocal = (): SpentLimit | undefined => {
    for (const budget of local) {
      const limit = budget.spent();
      if (limit !== undefined) return note(limit);
    }
    return undefined;
  };
  const chargeAll = async (delta: UsageDelta, counts: UsageDelta): Promise<void> => {
    own.charge({ ...delta, ...counts });
    for (const budget of local) budget.charge({ ...delta, ...counts });
    // An ExternalBudget counts calls when they are reserved; what was not reserved is charged here.
    for (const budget of external) note(await budget.charge({ ...delta, ...counts }));
  };

  const chargeStep = async (step: StepResult<AnyTools>): Promise<void> => {
    if (charged.has(step)) return;
    charged.add(step);
    const usage = usageFromAISDK(step.usage);
    const model = step.response?.modelId;
    let costUsd = pricing?.(usage, { model });
    if (costUsd !== undefined && !(typeof costUsd === 'number' && Number.isFinite(costUsd) && costUsd >= 0)) {
      unknownCost = `Expected \`pricing\` to return a non-negative number of dollars for model ${model ?? '(unknown)'}, got ${String(costUsd)}`;
      costUsd = undefined;
    } else if (costUsd === undefined && capsDollars && onUnknownCost === 'error') {
      unknownCost = `a step of model ${model ?? '(unknown)'} cost an unknown amount (${usage.inputTokens ?? '?'} input, ${usage.outputTokens ?? '?'} output tokens) under a maxCostUsd budget: pass budgetFor(…, { pricing }) that prices this model, or onUnknownCost: 'ignore'`;
    }
    // Tool calls the step ran that wrapTools did not count or refuse when they started: not the
    // invalid ones (never executed) nor the provider's.
    const invalid = new Set(step.content.flatMap((p) => (p.type === 'tool-call' && 'invalid' in p && p.invalid === true ? [p.toolCallId] : [])));
    const ran = step.content.filter((p) => (p.type === 'tool-result' || p.type === 'tool-error') && p.providerExecuted !== true && !invalid.has(p.toolCallId) && !handledTools.has(p.toolCallId)).length;
    const now = clock();
    const wallMs = Math.max(0, now - since);
    since = now;
    const llmCalls = reservedLlm > 0 ? 0 : 1;
    if (reservedLlm > 0) reservedLlm -= 1;
    await chargeAll({ ...responseUsage(usage, costUsd), wallMs }, { llmCalls, toolCalls: ran });
    spentLocal();
  };

  const stopWhen: StopCondition<AnyTools> = async ({ steps }) => {
    for (const step of steps) await chargeStep(step);
    if (unknownCost !== undefined) throw new Error(unknownCost);
    return spentLocal() !== undefined || stopped !== undefined;
  };

  const prepareStep: PrepareStepFunction<AnyTools> = async ({ steps }) => {
    for (const step of steps) await chargeStep(step);
    if (unknownCost !== undefined) throw new Error(unknownCost);
    const limit = spentLocal() ?? stopped;
    if (limit !== undefined) throw new BudgetExceededError(limit.message, limit.limit, limit.used, limit.max);
    // Counted when the call starts, so maxLlmCalls is never passed.
    for (const budget of external) {
      const refused = note(await budget.reserve('llm'));
      if (refused !== undefined) throw new BudgetExceededError(refused.message, refused.limit, refused.used, refused.max);
    }
    own.charge({ llmCalls: 1 });
    for (const budget of local) budget.charge({ llmCalls: 1 });
    reservedLlm += 1;
    return undefined;
  };

  const wrapTools = <T extends ToolSet>(tools: T): T => {
    if (typeof tools !== 'object' || tools === null) throw new InvalidArgumentError('tools', 'a record of tool() definitions', tools);
    return Object.fromEntries(
      Object.entries(tools).map(([name, t]) => {
        const execute = t.execute;
        if (execute === undefined) return [name, t];
        const guarded: typeof execute = async (input, ctx) => {
          // Known to this guard from here on: counted below if it runs, never if refused.
          handledTools.add(ctx.toolCallId);
          const limit = spentLocal() ?? stopped;
          if (limit !== undefined) throw new BudgetExceededError(`not run: ${limit.message}`, limit.limit, limit.used, limit.max);
          for (const budget of external) {
            const refused = note(await budget.reserve('tool'));
            if (refused !== undefined) throw new BudgetExceededError(`not run: ${refused.message}`, refused.limit, refused.used, refused.max);
          }
          own.charge({ toolCalls: 1 });
          for (const budget of local) budget.charge({ toolCalls: 1 });
          return execute(input, ctx);
        };
        return [name, { ...t, execute: guarded }];
      }),
    ) as T;
  };

  return {
    stopWhen,
    onStepFinish: (step) => {
      // The SDK ignores what an onStepFinish throws or resolves; charging is synchronous for
      // in-memory budgets, and an ExternalBudget's charge is awaited by stopWhen/prepareStep.
      void chargeStep(step).catch(() => {});
    },
    prepareStep,
    abortSignal,
    wrapTools,
    get usage() {
      return own.usage;
    },
    get stopped() {
      return stopped;
    },
    dispose: () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', forward);
    },
  };
}

function checkBudgets(budgets: unknown): AnyBudget[] {
  const list = Array.isArray(budgets) ? budgets : [budgets];
  if (list.length === 0) throw new InvalidArgumentError('budgets', 'a Budget, an ExternalBudget, or a non-empty array of them', budgets);
  list.forEach((b, i) => {
    const isExternal = typeof b === 'object' && b !== null && typeof (b as ExternalBudget).reserve === 'function' && typeof (b as ExternalBudget).charge === 'function';
    if (!(b instanceof Budget) && !isExternal) throw new InvalidArgumentError(Array.isArray(budgets) ? `budgets[${i}]` : 'budgets', 'a Budget or an ExternalBudget { reserve, charge }', b);
  });
  return list as AnyBudget[];
}

/** A timer that aborts at the earliest wall-time deadline left in the budgets, or none. */
function deadlineTimer(budgets: Budget[], abort: (error: BudgetExceededError) => void): ReturnType<typeof setTimeout> | undefined {
  let earliest: { ms: number; budget: Budget } | undefined;
  for (const budget of budgets) {
    const max = budget.limits.maxWallMs;
    if (max === undefined) continue;
    const left = max - budget.usage.wallMs;
    if (earliest === undefined || left < earliest.ms) earliest = { ms: left, budget };
  }
  if (earliest === undefined) return undefined;
  const { budget } = earliest;
  const fire = (): void => {
    const limit = budget.spent();
    const message = limit?.message ?? `${budget.label} exceeded: the ${formatDuration(budget.limits.maxWallMs ?? 0)} of wall time passed during a step`;
    abort(new BudgetExceededError(message, 'maxWallMs', budget.usage.wallMs, budget.limits.maxWallMs ?? 0));
  };
  if (earliest.ms <= 0) {
    fire();
    return undefined;
  }
  const timer = setTimeout(fire, earliest.ms);
  timer.unref?.();
  return timer;
}
