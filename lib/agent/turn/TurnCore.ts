import { State, type StateName } from '../../../states/StateName';
import type { StateMachine } from '../../machine/StateMachine';
import type { ForcedLogLevel } from '../../machine/TransitionRecord';
import type { SpentLimit } from '../BudgetLimits';
import { Deadline } from '../money/Deadline';
import { ExtensionState } from '../extensionStates';
import { abortReason } from './abortReason';
import { budgetError, limitData } from '../money/spentRecord';
import type { StallCheck } from '../stall/StallWatch';
import { MachineMovedError, TurnCancelledError, type TurnError } from '../TurnError';
import type { TurnOutcome } from '../TurnOutcome';
import type { TurnResult } from '../TurnResult';
import { AGENT_READY, turnStarts } from './turnEvents';
import type { UsageMeter } from '../money/UsageMeter';
import type { UsageTotals } from '../UsageTotals';

/** How a move is made: forced where the table has no edge, logged at `logLevel`, and `check` false to skip the moved-behind-our-back check. */
export interface MoveHow {
  forced?: boolean;
  check?: boolean;
  logLevel?: ForcedLogLevel;
}

/** What the move that ends a run hands to its result: the answer's text and the run's error. */
export interface EndExtra {
  text?: string;
  error?: TurnError;
}

/** A move's record: its description, or the description with data (and a log level for a forced move). */
export type MoveRecord = string | { description: string; data?: unknown; logLevel?: ForcedLogLevel };

const NORMAL: MoveHow = Object.freeze({});
/** A forced move: where the table has no edge for what happened. */
export const FORCED: MoveHow = Object.freeze({ forced: true });

// Extension states: the drivers check at construction that their tables have these edges.
const STALLED = ExtensionState.Stalled as unknown as StateName;
const STALL_STOPPED = ExtensionState.StallStopped as unknown as StateName;

/**
 * The moves of a run that do not depend on who drives it: the adapter calling a loop
 * (`TurnMoves`) or a mirror hearing a framework's events (`MirrorMoves`). Both start a run the
 * same way, end it with the same record (its outcome and the agent's usage so far), cancel it,
 * stop it at a spent budget or a stall, and fail it, in these methods; a driver adds only what
 * happens around the ending record (`beforeEnd`, `afterEnd`). So both write the same history
 * for the same run.
 */
export abstract class TurnCore {
  /** The run's number: 1 for an agent's first. */
  turn: number;
  /** Moves this run made. */
  moves = 0;
  /** Texts of responses that also asked for tools; made at the first. */
  texts: string[] | undefined;
  /** Where this run last put the machine; with `checksMoves`, anything else means someone moved it meanwhile. */
  #expected: StateName;

  /** `checksMoves`: refuse to move from a state the run did not put the machine in (`MachineMovedError`). */
  constructor(
    readonly machine: StateMachine<StateName>,
    turn: number,
    readonly checksMoves: boolean,
  ) {
    this.turn = turn;
    this.#expected = machine.pendingState;
  }

  /** The run's signal: aborted by a cancel or a passed deadline. */
  protected abstract runSignal(): AbortSignal;
  /** The run's meter. */
  protected abstract runMeter(): UsageMeter;
  /** The agent's own usage so far: what the records carry. */
  protected abstract ownUsage(): UsageTotals;
  /** What the driver does before the ending record (let go of holds, charge an attempt in flight). */
  protected beforeEnd(): void {}
  /** The run's result, after the ending record. */
  protected abstract afterEnd(outcome: TurnOutcome, extra: EndExtra): TurnResult;

  /** Where this run last put the machine. */
  get expected(): StateName {
    return this.#expected;
  }

  /** Every move of the run goes through here; `forced` only where the table has no edge. */
  move(to: StateName, event: MoveRecord, how: MoveHow = NORMAL): void {
    const machine = this.machine;
    // Never ask for a move from a state we did not put the machine in: it would be illegal.
    // The machine validates against its queued tail (a listener's moves wait their turn), so compare with that.
    if (this.checksMoves && how.check !== false) {
      const tail = machine.pendingState;
      if (tail !== this.#expected) throw new MachineMovedError(this.#expected, tail, this.turn);
    }
    if (how.forced === true) machine.forceTransition(to, event);
    else machine.transition(to, event);
    this.moves += 1;
    this.#expected = to;
  }

  /**
   * WaitingForUserInput, from wherever the last run left the machine (`current`): from Ready the
   * agent's first record, which carries `ready` when given (a resumed run's earlier spend).
   */
  enter(current: StateName, ready?: MoveRecord): void {
    if (current === State.Ready) this.move(State.WaitingForUserInput, ready ?? AGENT_READY);
    else if (this.machine.table.states[current]?.isTerminal === true)
      this.move(State.WaitingForUserInput, turnStarts(this.turn));
    else if (current !== State.WaitingForUserInput)
      this.move(State.WaitingForUserInput, `a run started with the machine in ${current}, not between turns`, {
        forced: true,
      });
  }

  /**
   * A run on an already-cancelled signal or a spent budget (`spent`) makes no call.
   * WaitingForUserInput cannot reach BudgetExceeded or Cancelled, so the legal move is to Error,
   * and the record's data says which outcome it stands for. Undefined: the run may start.
   */
  refuseStart(spent: SpentLimit | undefined): TurnResult | undefined {
    const signal = this.runSignal();
    if (signal.aborted && !(signal.reason instanceof Deadline)) return this.cancelledBeforeStart();
    if (spent === undefined) return undefined;
    return this.overBudget(State.Error, spent, {}, '; no LLM call made');
  }

  /** Cancelled in WaitingForUserInput: → Error, the record's outcome `cancelled`. */
  cancelledBeforeStart(): TurnResult {
    const reason = abortReason(this.runSignal());
    const error = new TurnCancelledError(reason, State.WaitingForUserInput);
    return this.end(State.Error, `cancelled before the turn started: ${reason}`, { reason }, 'cancelled', { error });
  }

  /** The move that ends the run: its record carries the outcome and the agent's usage so far. */
  end(
    to: StateName,
    description: string,
    data: Record<string, unknown>,
    outcome: TurnOutcome,
    extra: EndExtra,
    how: MoveHow = NORMAL,
  ): TurnResult {
    this.beforeEnd();
    this.runMeter().chargeWall();
    const event = {
      description,
      data: { ...data, outcome, usage: this.ownUsage() },
      ...(how.logLevel === undefined ? {} : { logLevel: how.logLevel }),
    };
    this.move(to, event, how);
    return this.afterEnd(outcome, extra);
  }

  /** A budget is spent (`spent`): the run ends `budget_exceeded` in `to`, the record naming the limit. */
  overBudget(
    to: StateName,
    spent: SpentLimit,
    data: Record<string, unknown> = {},
    suffix = '',
    how: MoveHow = NORMAL,
  ): TurnResult {
    return this.end(
      to,
      `${spent.message}${suffix}`,
      { ...limitData(spent), ...data },
      'budget_exceeded',
      { error: budgetError(spent) },
      how,
    );
  }

  /**
   * Cancellation outside CheckingForCancellation: the table has no edge, so the move is forced,
   * with the reason, and logged at info (an ordinary cancel is news, not a fault). A passed
   * deadline ends the run the same way, as budget_exceeded.
   */
  cancel(from: StateName, data: Record<string, unknown> = {}): TurnResult {
    const signal = this.runSignal();
    const deadline: unknown = signal.reason;
    if (deadline instanceof Deadline) {
      const machine = this.machine;
      const to = machine.canMoveTo(State.BudgetExceeded) ? State.BudgetExceeded : State.Error;
      const forced = to === State.BudgetExceeded ? false : !machine.canMoveTo(State.Error);
      return this.overBudget(to, deadline.spent, data, ` (deadline passed during ${from})`, { forced });
    }
    const reason = abortReason(signal);
    return this.end(
      State.Cancelled,
      `cancelled during ${from}: ${reason}`,
      { reason, ...data },
      'cancelled',
      { error: new TurnCancelledError(reason, from) },
      { forced: true, logLevel: 'info' },
    );
  }

  /**
   * CheckingForCancellation found the signal aborted: the calls `interrupted` are not run, and
   * the run ends Cancelled (a legal move from here), or at a passed deadline as `cancel` ends it.
   */
  cancelBeforeTools(interrupted: readonly string[]): TurnResult {
    const signal = this.runSignal();
    if (signal.reason instanceof Deadline) return this.cancel(State.CheckingForCancellation);
    const reason = abortReason(signal);
    const error = new TurnCancelledError(reason, State.CheckingForCancellation);
    return this.end(State.Cancelled, `cancelled before tools ran: ${reason}`, { reason, interrupted }, 'cancelled', {
      error,
    });
  }

  /** Ends the run in Error. Most states reach Error legally; CheckingGitCommits and RunningAutoformatters do not, so there the move is forced. */
  failed(error: TurnError, data: Record<string, unknown>): TurnResult {
    return this.end(
      State.Error,
      error.message,
      data,
      'error',
      { error },
      { forced: !this.machine.canMoveTo(State.Error) },
    );
  }

  /**
   * A stall detector threw (→ Error), or fired (→ Stalled): with policy `stop` the run then ends
   * in StallStopped (outcome `stalled`); with `nudge` it goes on (undefined), the caller keeping the nudge.
   */
  stalled(stall: StallCheck): TurnResult | undefined {
    if (stall.kind === 'threw') return this.failed(stall.error, { operation: 'stall detector' });
    this.move(STALLED, stall.event);
    if (stall.error === undefined) return undefined;
    return this.end(STALL_STOPPED, stall.error.message, { detector: stall.finding.detector }, 'stalled', {
      error: stall.error,
    });
  }

  /** The run's result: its outcome, text and error, the meter's usage (stopped now), its number and moves. */
  makeResult(outcome: TurnOutcome, extra: EndExtra): TurnResult {
    const meter = this.runMeter();
    meter.chargeWall();
    meter.stop();
    const result = { outcome } as TurnResult;
    if ('text' in extra) result.text = extra.text;
    if (extra.error !== undefined) result.error = extra.error;
    result.usage = meter.usage;
    result.turn = this.turn;
    result.transitions = this.moves;
    if (this.texts !== undefined) result.texts = this.texts;
    return result;
  }
}
