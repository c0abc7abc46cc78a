import type { LLMCallInput } from '../AgentEvents';
import type { Attempt, LLMOperation, LLMOutcome } from '../turn/LLMOutcome';
import { keepReserveLine } from './keepReserveLine';
import { holdAttempt } from './holdAttempt';
import {
  boundLLMCall,
  plansCalls,
  type BoundCall,
  type CallFlags,
  type PlannedCall,
  type Reservation,
} from './reserveLLMCall';
import type { SpentLimit } from '../BudgetLimits';
import { isThenable } from '../../internal/isThenable';
import { OperationError } from '../TurnError';
import type { TurnScope } from '../turn/TurnScope';
import type { WrapHold } from '../money/ExternalBudget';
import { ONE_LLM_CALL } from '../UsageTotals';

/** Why a ledger line states no worst case, when the loop gives its calls no bound. */
const NO_BOUND = 'the loop has no llmCallBound';

/** A pausing cap refused the attempt and was raised since: nothing was sent, so it is planned again. */
export const RAISED = Symbol('raised');

/** What the gate answers: the attempt goes (what it holds), the call ends (its outcome), or a pausing cap was raised. */
export type Gate = Reservation | LLMOutcome | typeof RAISED;

/**
 * The gate before one LLM attempt of the adapter: its bound and worst case when a strict cap,
 * the ledger or an external dollar cap needs them; the in-process budgets; the worst case held
 * against strict caps; external budgets reserved; the ledger's reserve line kept before the
 * request may leave; the attempt counted. Either the attempt goes (what it holds), or the call
 * ends with the outcome (a budget spent, a failure, an abort), or a pausing cap was raised
 * (`RAISED`). Only a bound, an external budget, the ledger or a pausing cap ever waits: without
 * them the gate answers at once, not in a promise (bench: turncore).
 * `wrapHold`: the final call's hold an external budget keeps beside this one (`total.wrapUp` on
 * BullMQ); `handOver`: lets go of the in-process hold this call takes the place of, with no
 * await before its own.
 */
export function gateAttempt(
  scope: TurnScope,
  operation: LLMOperation,
  input: LLMCallInput,
  attempt: number,
  failures: Attempt[],
  flags: CallFlags | undefined,
  wrapHold: WrapHold | undefined,
  handOver: (() => void) | undefined,
): Gate | Promise<Gate> {
  const { meter } = scope;
  const planned = plansCalls(scope) ? boundLLMCall(scope, input, attempt, flags) : undefined;
  // Nothing to await (a bound given at once, no external budget, no reserve line): no promise either.
  if (isThenable(planned) || meter.hasExternal || scope.settings.ledger !== undefined)
    return gateWaiting(scope, operation, attempt, failures, planned, wrapHold, handOver);
  if (planned !== undefined && 'kind' in planned)
    return { kind: 'failed', error: planned.error, data: { operation, failures } };
  const held = gateInProcess(scope, failures, handOver, planned);
  if (held instanceof Promise || 'kind' in held) return held;
  meter.charge(ONE_LLM_CALL, false);
  return held;
}

/** The checks and the in-process hold, with no await: the budgets spent, the hold refused (a pausing cap waits for its raise), or what is held. */
function gateInProcess(
  scope: TurnScope,
  failures: Attempt[],
  handOver: (() => void) | undefined,
  planned: PlannedCall | undefined,
): Reservation | LLMOutcome | Promise<LLMOutcome | typeof RAISED> {
  const { settings: s, meter, signal } = scope;
  if (signal.aborted) return { kind: 'aborted', data: { failures } };
  // The budgets, the hold this call takes the place of, and the worst case held against strict caps (and stated in the ledger).
  const reserved = holdAttempt(meter, s.pricing, s.minOutputTokens, planned, handOver);
  // A pausing shared cap: nothing was sent, so the same attempt is planned again once it is raised.
  if (reserved.kind === 'budget' && reserved.spent.raises !== undefined && scope.waitForRaise !== undefined)
    return raisedOrAborted(scope, reserved.spent, failures);
  if (reserved.kind === 'budget') return { kind: 'budget', spent: reserved.spent, failures };
  return reserved.reservation;
}

async function raisedOrAborted(
  scope: TurnScope,
  spent: SpentLimit,
  failures: Attempt[],
): Promise<LLMOutcome | typeof RAISED> {
  return (await scope.waitForRaise!(spent)) ? RAISED : { kind: 'aborted', data: { failures } };
}

/** The gate with a bound to await, an external budget to reserve or a reserve line to keep. */
async function gateWaiting(
  scope: TurnScope,
  operation: LLMOperation,
  attempt: number,
  failures: Attempt[],
  bound: BoundCall | Promise<BoundCall>,
  wrapHold: WrapHold | undefined,
  handOver: (() => void) | undefined,
): Promise<Gate> {
  const { settings: s, meter, turn } = scope;
  // The request's bound and worst case, when a strict cap, the ledger or an external dollar
  // cap needs them (the only await before the call, besides external budgets).
  const planned = await bound;
  if (planned !== undefined && 'kind' in planned)
    return { kind: 'failed', error: planned.error, data: { operation, failures } };
  const hold = gateInProcess(scope, failures, handOver, planned);
  if (hold instanceof Promise || 'kind' in hold) return hold;
  const held = hold;
  if (meter.hasExternal) {
    const spent = await meter.reserveCall(held, wrapHold);
    if (spent instanceof OperationError) return { kind: 'failed', error: spent, data: { operation, failures } };
    if (spent?.raises !== undefined && scope.waitForRaise !== undefined) {
      // An external pausing cap (a BullMQ batch's): as above, the same attempt once it is raised.
      return (await scope.waitForRaise(spent)) ? RAISED : { kind: 'aborted', data: { failures } };
    }
    if (spent !== undefined) return { kind: 'budget', spent, failures };
  }
  // Counted, and its reserve line kept by a store's commit (a file sink keeps it before it returns): no call leaves before.
  const kept = keepReserveLine(
    meter,
    s.ledger,
    { turn, operation, attempt },
    s.clock,
    held,
    s.ledgerDefaultMaxCostUsd,
    NO_BOUND,
  );
  const unkept = kept === undefined ? undefined : await kept;
  if (unkept !== undefined) {
    // The request never left: its hold goes back.
    meter.release(held.held, held.externalHold);
    return {
      kind: 'failed',
      error: new OperationError("the ledger's reserve line", unkept),
      data: { operation, failures },
    };
  }
  return held;
}
