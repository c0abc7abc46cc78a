import type { BudgetedLLM, LLMCallBound, Usage } from '../AgentLoop';
import type { SpentLimit } from '../BudgetLimits';
import type { BoundExceeded } from '../boundExceeded';
import { chargeResponse } from './chargeResponse';
import { chargeFailure } from './chargeFailure';
import { chargeFields } from './endAttempt';
import { boundProblem, planBoundedCall, reserveLLMCall } from './reserveLLMCall';
import { budgetError } from '../money/spentRecord';
import { ContractViolationError, OperationError } from '../TurnError';
import type { TurnScope } from '../turn/TurnScope';
import { journalError, type HookOperation, type LlmJournalEntry } from '../journal/JournalEntry';
import { keepReserveLine } from './keepReserveLine';

/** What one call through the handle cost, for the record of the move after the hook. */
export interface HookCall {
  usage?: Usage;
  costUsd?: number;
  chargedAtHold?: string;
  released?: string;
  releasedUsd?: number;
  unpriced?: string;
  boundExceeded?: BoundExceeded;
  error?: string;
}

/** A hook's handle on the run's budgets, and what its calls did. */
export interface BudgetedHook {
  llm: BudgetedLLM;
  /** Every call made through `llm`, in order. */
  readonly calls: readonly HookCall[];
  /** Set when the budgets refused a call, or a response passed its bound under a strict cap: the run ends `budget_exceeded`. */
  readonly spent: SpentLimit | undefined;
}

/**
 * The handle a hook that may call an LLM (`compact`, named `hook`) is given: each call through it
 * passes the same gate, hold and charge as the adapter's own calls (`reserveLLMCall` and the
 * charge rule): its bound's worst case held before it starts, lowered to what fits under a
 * strict cap, and charged after at its reported usage, else at its whole hold.
 */
export function budgetedHook(scope: TurnScope, hook: HookOperation): BudgetedHook {
  return new Hook(scope, hook);
}

/** Read before any call is made, and usually never added to. */
const NO_CALLS: readonly HookCall[] = Object.freeze([]);

/**
 * A class, not an object literal with a `spent` getter: each evaluation of such a literal makes
 * a fresh getter, hence a fresh hidden class in old space, which holds the turn's objects through
 * every scavenge until a full GC (measured: six times the promoted bytes, three times the GC
 * time of a turn that never calls through `ctx.llm`).
 */
class Hook implements BudgetedHook {
  readonly llm: BudgetedLLM;
  readonly #scope: TurnScope;
  readonly #hook: HookOperation;
  #calls: HookCall[] | undefined;
  #spent: SpentLimit | undefined;

  constructor(scope: TurnScope, hook: HookOperation) {
    this.#scope = scope;
    this.#hook = hook;
    // Bound: a hook may pass `ctx.llm.call` on unbound. Not an arrow: the bundle's keepNames
    // names each arrow as it is made (bench: turncore).
    this.llm = { call: this.#call.bind(this) };
  }

  get calls(): readonly HookCall[] {
    return this.#calls ?? NO_CALLS;
  }

  get spent(): SpentLimit | undefined {
    return this.#spent;
  }

  #refuse(limit: SpentLimit): never {
    this.#spent ??= limit;
    throw budgetError(limit);
  }

  #record(call: HookCall): void {
    (this.#calls ??= []).push(call);
  }

  async #call<R extends { usage?: Usage | undefined; model?: string | undefined }>(
    bound: LLMCallBound,
    invoke: (ctx: { signal: AbortSignal; maxOutputTokens?: number }) => Promise<R>,
  ): Promise<R> {
    const scope = this.#scope;
    const hook = this.#hook;
    const { settings: s, meter, signal } = scope;
    const problem = boundProblem(bound);
    if (problem !== undefined) throw new ContractViolationError(`${hook}: ctx.llm.call`, problem, bound);
    if (typeof invoke !== 'function')
      throw new ContractViolationError(`${hook}: ctx.llm.call`, 'its second argument must be a function', invoke);
    if (this.#spent !== undefined) this.#refuse(this.#spent);
    const planned = planBoundedCall(bound, s.pricing, meter.strict);
    if (planned instanceof OperationError) throw planned;
    const before = meter.spent();
    if (before !== undefined) this.#refuse(before);
    const reserved = reserveLLMCall(meter, s.pricing, s.minOutputTokens, planned);
    if (reserved.kind === 'budget') return this.#refuse(reserved.spent);
    const held = reserved.reservation;
    if (meter.hasExternal) {
      const external = await meter.reserve(
        'llm',
        held.externalHold === undefined ? undefined : { costUsd: held.externalHold },
      );
      if (external !== undefined) meter.release(held.held, undefined);
      if (external instanceof OperationError) throw external;
      if (external !== undefined) this.#refuse(external);
    }
    // The ledger's write-ahead line, as for the loop's own calls: a crash mid-call leaves its hold on record.
    const number = ++scope.hookCalls;
    const kept = keepReserveLine(
      meter,
      s.ledger,
      { turn: scope.turn, operation: hook, attempt: number },
      s.clock,
      held,
      s.ledgerDefaultMaxCostUsd,
      'the hook gave no bound',
    );
    const unkept = kept === undefined ? undefined : await kept;
    if (unkept !== undefined) {
      // The request never left: its hold goes back.
      meter.release(held.held, held.externalHold);
      throw new OperationError("the ledger's reserve line", unkept);
    }
    const startedAt = s.clock();
    // What the call cost, closing its reservation: numbers only, the library never sees the hook's request.
    const ledger = (
      money: Omit<LlmJournalEntry, 'type' | 'turn' | 'operation' | 'attempt' | 'startedAt' | 'endedAt'>,
    ) =>
      s.ledger?.({
        type: 'llm',
        turn: scope.turn,
        operation: hook,
        attempt: number,
        startedAt,
        endedAt: s.clock(),
        ledgerOnly: true,
        ...money,
      });
    let value: R;
    try {
      value = await invoke(
        held.maxOutputTokens === undefined ? { signal } : { signal, maxOutputTokens: held.maxOutputTokens },
      );
    } catch (error) {
      // It may have left: charged at its hold unless it provably never did; a refused answer at its usage.
      const answered = chargeFailure(
        { meter, held, operation: hook, turn: scope.turn, boundBy: "the hook's bound", policy: s },
        error,
      );
      const charge = chargeFields(answered.charge);
      const usage = answered.usage === undefined ? {} : { usage: answered.usage };
      ledger({ error: journalError(error), ...usage, ...charge });
      this.#record({ ...usage, ...charge, error: String(error) });
      throw error;
    }
    const { valid, priced, charge, passed } = chargeResponse({
      meter,
      held,
      value,
      operation: hook,
      turn: scope.turn,
      boundBy: "the hook's bound",
      policy: s,
    });
    this.#record({ usage: valid, ...chargeFields(charge), ...(passed && { boundExceeded: passed }) });
    ledger({ usage: valid, ...chargeFields(charge), ...(passed && { boundExceeded: passed }) });
    if (meter.hasExternal) {
      const flushed = await meter.flush();
      if (flushed instanceof OperationError) throw flushed;
    }
    // Its bound cannot be trusted: under a strict cap the run stops, and every budget it shares.
    if (passed !== undefined && meter.tripsOnBound) {
      const spent = meter.trip(passed);
      await meter.tripped();
      this.#refuse(spent);
    }
    if (priced.error !== undefined) throw priced.error;
    return value;
  }
}
