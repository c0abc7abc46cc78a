import { State } from '../../../states/StateName';
import type { LLMCallBound } from '../AgentLoop';
import type { SpentLimit } from '../BudgetLimits';
import type { WrapHold } from '../money/ExternalBudget';
import { keepReserveLine } from '../calls/keepReserveLine';
import { holdAttempt } from '../calls/holdAttempt';
import { planMirrorCall } from './planMirrorCall';
import type { MirrorMoves } from './MirrorMoves';
import type { MirrorStop } from './MirrorStop';
import { mirrorEndedError } from './mirrorStopReason';
import { NOTHING_RESERVED } from '../calls/reserveLLMCall';
import { OperationError } from '../TurnError';

/** Why a ledger line states no worst case, when the framework gave the call no bound. */
const NO_BOUND = 'the framework gave modelCallStart no bound for this call';

/**
 * How `gateMirrorCall` treats a call: `handOver` lets go of the hold it takes the place of;
 * `wraps`: a cost refusal wraps up (`budget.wrapUp`); `wrapHold`: what the call does with the
 * run's final-call hold in an external budget that keeps one (a BullMQ batch's `total.wrapUp`).
 */
export interface GateHow {
  handOver?: () => void;
  wraps?: boolean;
  wrapHold?: WrapHold;
}

/**
 * The checks before an attempt from a sending state, as the adapter's callLLM makes them: the
 * budgets, then the attempt's worst case held against strict caps (and external ones).
 */
export async function gateMirrorCall(
  run: MirrorMoves,
  bound: LLMCallBound | undefined,
  whyNoBound: string | undefined,
  how: GateHow = {},
): Promise<MirrorStop | undefined | { wrap: SpentLimit }> {
  const meter = run.meter!;
  const from = run.machine.pendingState;
  if (run.deps.signal().aborted) return run.stop(run.cancel(from, { failures: run.failures }));
  // An earlier attempt whose end was never reported (a retry after an unreported failure) ended: its hold goes.
  run.endAttempt();
  const planned = planMirrorCall(run.deps.pricing, meter.strict, bound, whyNoBound);
  if (planned instanceof OperationError) return run.stop(run.failed(planned, { operation: run.operation }));
  // The budgets, the hold this call takes the place of (the final call's hold), then its own,
  // as the adapter's gate takes them. Never lowered: the framework's request is made as it
  // stands, so it must fit whole. No await from the check to the hold.
  const gate = holdAttempt(meter, run.deps.pricing, Infinity, planned, how.handOver);
  const held = gate.kind === 'go' ? gate.reservation : NOTHING_RESERVED;
  let spent: SpentLimit | OperationError | undefined = gate.kind === 'budget' ? gate.spent : undefined;
  // Its worst case did not fit beside the final call's hold: the run wraps up instead, nothing held for it.
  if (how.wraps === true && spent?.limit === 'maxCostUsd' && spent.hold !== undefined && meter.strict)
    return { wrap: spent };
  if (spent === undefined && meter.hasExternal) {
    spent = await meter.reserveCall(held, how.wrapHold);
    // It did not fit beside every run's final-call hold outside: the run wraps up, its own kept there.
    if (how.wraps === true && run.running && wrapsUp(spent)) return { wrap: spent };
  }
  if (!run.running) {
    if (spent === undefined) meter.release(held.held, held.externalHold);
    return mirrorEndedError(run.result, run.turn, run.machine.current);
  }
  if (spent instanceof OperationError) return run.stop(run.failed(spent, { operation: run.operation }));
  if (spent !== undefined)
    return run.stop(run.overBudget(State.Error, spent, { failures: run.failures }, '; no further LLM call made'));
  run.held = held;
  run.attempt += 1;
  // Counted, and its reserve line kept by a store's commit (a file sink keeps it before it returns): no call leaves before.
  const { turn, operation, attempt } = run;
  const kept = keepReserveLine(
    meter,
    run.deps.ledger,
    { turn, operation, attempt },
    run.deps.clock,
    held,
    run.deps.ledgerDefaultMaxCostUsd,
    whyNoBound ?? NO_BOUND,
  );
  if (kept !== undefined) {
    const unkept = await kept;
    if (unkept !== undefined || !run.running) {
      // The request never left: its hold goes back, unless the run's end let go of it already
      // (a second release would free another run's hold on a shared strict cap).
      if (run.held === held) {
        run.held = NOTHING_RESERVED;
        meter.release(held.held, held.externalHold);
      }
      // Ended meanwhile (its framework aborted or failed it): it is not ended again.
      if (unkept === undefined || !run.running) return mirrorEndedError(run.result, run.turn, run.machine.current);
      const error = new OperationError("the ledger's reserve line", unkept);
      return run.stop(run.failed(error, { operation: run.operation }));
    }
  }
  run.attemptStartedAt =
    meter.hasExternal || held !== NOTHING_RESERVED || kept !== undefined ? run.deps.clock() : meter.lastReading;
  return undefined;
}

/** An external budget's refusal of an ordinary call beside the final calls' holds (the run then wraps up). */
function wrapsUp(spent: SpentLimit | OperationError | undefined): spent is SpentLimit {
  return (
    spent !== undefined && !(spent instanceof OperationError) && spent.wrapsUp === true && spent.hold !== undefined
  );
}
