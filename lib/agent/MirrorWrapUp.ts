import { State, type StateName } from '../../states/StateName';
import { formatUsd } from '../internal/formatUsd';
import type { LLMCallBound, LLMResponse, Pricing } from './AgentLoop';
import type { ResolvedEndings } from './BudgetEndings';
import { budgetNote } from './budgetNote';
import { ExtensionState } from './extensionStates';
import { gateMirrorCall } from './gateMirrorCall';
import type { MirrorMoves } from './MirrorMoves';
import type { MirrorStop } from './MirrorStop';
import { OperationError } from './TurnError';
import type { UsageMeter } from './UsageMeter';
import type { UsageTotals } from './UsageTotals';
import type { TurnResult } from './TurnResult';
import { llmResponded } from './turnEvents';
import { BUDGET_RAN_OUT, finalReserve, wrapUpEvent } from './WrapUp';
import { worstCaseCost } from './worstCaseCost';

/**
 * What a mirrored model call must carry, as `StepMirror.modelCallPlan` answers it: `budgetNote`
 * (add it to the request, `budget.visible`), `wrapUp` (this is the final call: send it with no
 * tool to call, this instruction added last), `withheld` (the results of the tool calls sent
 * with this final call would not fit in the cap: send this text as each one's error result instead).
 */
export interface MirrorCallFlags {
  budgetNote?: string;
  wrapUp?: string;
  withheld?: string;
}

/** The bound of a model call as it would be sent with `flags`, or why it has none. */
export type MirrorBoundOf = (flags: MirrorCallFlags) => LLMCallBound | string;

const WRAPPING_UP = ExtensionState.WrappingUp as unknown as StateName;

/**
 * The final call's hold and the budget note of a mirror's runs (`budget.wrapUp`, `budget.visible`),
 * as the adapter's `WrapUp` keeps them: before each ordinary call the worst case of a final call
 * after it is held beside it (against strict caps; checked against others); when the call does
 * not fit, the run moves to WrappingUp and the integration makes that call the final one, the
 * hold handed over to it with no await between. One per mirror; `MirrorMoves` resets it per run.
 */
export class MirrorWrapUp {
  readonly #endings: ResolvedEndings;
  readonly #pricing: Pricing | undefined;
  /** USD of the final call's reserve held now in the strict budgets. */
  #held = 0;
  /** Whether the run is making its final call (a retry of it stays final). */
  #final = false;

  constructor(endings: ResolvedEndings, pricing: Pricing | undefined) {
    this.#endings = endings;
    this.#pricing = pricing;
  }

  /** Whether a budget asks for the final call (`wrapUp`), not only the note: each call then needs its bound. */
  get wrapsUp(): boolean {
    return this.#endings.wrapUp !== undefined;
  }

  /** A run begins: no hold, no final call yet. */
  begin(): void {
    this.#held = 0;
    this.#final = false;
  }

  /** Lets go of the final call's reserve (the run ended, or the final call takes its place). */
  release(meter: UsageMeter): void {
    if (this.#held > 0) meter.release(this.#held, undefined);
    this.#held = 0;
  }

  /**
   * Plans one model attempt from a sending state (or WrappingUp, a retry of the final call):
   * resolves to the flags it must carry, or to why the run stopped (it has then ended).
   */
  async plan(run: MirrorMoves, boundOf: MirrorBoundOf, needsBound: boolean): Promise<MirrorStop | MirrorCallFlags> {
    const meter = run.meter!;
    const flags: MirrorCallFlags = this.#endings.visible ? { budgetNote: budgetNote(meter.budgets) } : {};
    const wrap = this.#endings.wrapUp;
    if (this.#final) return this.#finalCall(run, boundOf, flags);
    if (wrap === undefined) {
      const bound = needsBound ? boundOf(flags) : undefined;
      const stop = await gateMirrorCall(
        run,
        typeof bound === 'object' ? bound : undefined,
        typeof bound === 'string' ? bound : undefined,
      );
      return stop === undefined ? flags : (stop as MirrorStop);
    }
    const next = boundOf(flags);
    const asFinal = boundOf({ ...flags, wrapUp: wrap.instruction });
    if (typeof next === 'string' || typeof asFinal === 'string')
      return failed(run, `it needs the bound of each model call, and this call has none: ${String(next)}`);
    const reserve = wrap.reserveUsd ?? finalReserve(asFinal, next, this.#pricing);
    if (reserve instanceof OperationError) return failed(run, reserve.message);
    const nextUsd = worstCaseCost(next, this.#pricing).costUsd ?? Infinity;
    // From the reserve's hold to the call's, no await: no other run takes the room between.
    if (meter.strict) {
      // Held from call to call, grown or shrunk to this call's, let go of only for the final call.
      if (reserve > this.#held) {
        const refused = meter.hold(reserve - this.#held);
        if (refused !== undefined) return this.#wrapUp(run, boundOf, flags, reserve, nextUsd, refused.message);
      } else if (reserve < this.#held) meter.release(this.#held - reserve, undefined);
      this.#held = reserve;
    } else {
      const room = meter.costRoom;
      if (nextUsd + reserve > room)
        return this.#wrapUp(
          run,
          boundOf,
          flags,
          reserve,
          nextUsd,
          `the next LLM call may cost up to ${formatUsd(nextUsd)}, which does not fit beside the final call's ${formatUsd(reserve)} in the ${formatUsd(Math.max(0, room))} left`,
        );
    }
    const gate = await gateMirrorCall(run, next, undefined, { wraps: true });
    if (gate === undefined) return flags;
    if ('wrap' in gate) return this.#wrapUp(run, boundOf, flags, reserve, nextUsd, gate.wrap.message);
    return gate;
  }

  /** → WrappingUp: the call is made as the final call. */
  #wrapUp(
    run: MirrorMoves,
    boundOf: MirrorBoundOf,
    flags: MirrorCallFlags,
    reserve: number,
    nextUsd: number,
    reason: string,
  ): Promise<MirrorStop | MirrorCallFlags> {
    run.move(WRAPPING_UP, wrapUpEvent(reserve, nextUsd, reason));
    this.#final = true;
    return this.#finalCall(run, boundOf, flags);
  }

  /**
   * The final call: no tools, the instruction added, with the tool results it carries — the real
   * ones when they fit in the cap, else answers that say the budget ran out. The reserve is let
   * go of just before the call's own hold is taken, with no await between.
   */
  async #finalCall(
    run: MirrorMoves,
    boundOf: MirrorBoundOf,
    flags: MirrorCallFlags,
  ): Promise<MirrorStop | MirrorCallFlags> {
    const meter = run.meter!;
    const final: MirrorCallFlags = { ...flags, wrapUp: this.#endings.wrapUp!.instruction };
    let bound = boundOf(final);
    if (typeof bound === 'string') return failed(run, `the final call has no bound: ${bound}`);
    if (run.operation === 'sendToolResults') {
      const room = (meter.strict ? meter.room : meter.costRoom) + this.#held;
      const worst = worstCaseCost(bound, this.#pricing).costUsd;
      if (worst === undefined || worst > room) {
        final.withheld = BUDGET_RAN_OUT;
        bound = boundOf(final);
        if (typeof bound === 'string') return failed(run, `the final call has no bound: ${bound}`);
      }
    }
    const stop = await gateMirrorCall(run, bound, undefined, { handOver: () => this.release(meter) });
    return stop === undefined ? final : (stop as MirrorStop);
  }
}

/**
 * The final call answered (charged and journaled): the run ends in EndOfTurn with its answer
 * (outcome `wrapped_up`); tool calls it asked for anyway stay unanswered, as the adapter's do.
 */
export function wrappedUp(
  run: MirrorMoves,
  response: LLMResponse,
  problems: readonly string[],
  unknownCost: string | undefined,
  usage: UsageTotals,
): TurnResult {
  const calls = response.toolCalls ?? [];
  const text = response.text ?? '';
  const record = llmResponded(
    run.attempt,
    run.failures,
    calls.length,
    response,
    problems,
    unknownCost,
    undefined,
    usage,
  );
  run.failures = [];
  run.lastText = text;
  run.slots = calls.map((call) => ({ call, status: 'pending', startedAt: 0, endedAt: 0 }));
  run.unsent = calls.length > 0;
  const data = { ...(record.data as Record<string, unknown>), answer: text };
  return run.end(State.EndOfTurn, 'the final answer within the cap ends the turn', data, 'wrapped_up');
}

/** The call cannot be planned: the run ends in Error, naming the option. */
function failed(run: MirrorMoves, why: string): MirrorStop {
  const error = new OperationError('budget.wrapUp', new Error(why));
  return run.stop(State.Error, error.message, { operation: run.operation }, 'error', error);
}
