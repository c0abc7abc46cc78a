import { State } from '../../../states/StateName';
import type { LLMCallBound, LLMResponse, Pricing } from '../AgentLoop';
import type { ResolvedEndings } from '../BudgetEndings';
import { budgetNoteOf } from '../endings/budgetNoteOf';
import { WRAPPING_UP } from '../extensionStates';
import { gateMirrorCall } from './gateMirrorCall';
import type { MirrorBoundOf, MirrorCallFlags } from './MirrorCallFlags';
import type { MirrorMoves, RunEndings } from './MirrorMoves';
import type { MirrorStop } from './MirrorStop';
import { mirrorEndedError } from './mirrorStopReason';
import type { ExternalBudget } from '../money/ExternalBudget';
import { OperationError } from '../TurnError';
import type { UsageMeter } from '../money/UsageMeter';
import type { TurnResult } from '../TurnResult';
import { FINAL_FORMS } from '../endings/finalForms';
import { holdFinalCall } from '../endings/holdFinalCall';
import { finalCallWorstCase, wrapUpEvent } from '../endings/WrapUp';
import { worstCaseCost } from '../money/worstCaseCost';

/**
 * The final call's hold and the budget note of a mirror's runs (`budget.wrapUp`, `budget.visible`),
 * as the adapter's `WrapUp` keeps them: before each ordinary call the worst case of a final call
 * after it is held beside it (against strict caps; checked against others; and kept, beside the
 * call, by an external budget that keeps final-call holds — a BullMQ batch's); when the call does
 * not fit, the run moves to WrappingUp and the integration makes that call the final one, the
 * hold handed over to it with no await between. One per mirror; `MirrorMoves` resets it per run.
 */
export class MirrorWrapUp implements RunEndings {
  readonly #endings: ResolvedEndings;
  readonly #pricing: Pricing | undefined;
  /** Whether an external budget keeps the final call's hold (it is then sent with each model call). */
  readonly #holdsOutside: boolean;
  /** USD of the final call's hold kept now in the strict budgets. */
  #held = 0;
  /** USD of the final call's hold the external budgets keep (after the last ordinary call they let through). */
  #keptOutside = 0;
  /** Whether the run is making its final call (a retry of it stays final). */
  #final = false;

  constructor(endings: ResolvedEndings, pricing: Pricing | undefined, external: readonly ExternalBudget[]) {
    this.#endings = endings;
    this.#pricing = pricing;
    this.#holdsOutside = endings.wrapUp !== undefined && external.some((b) => b.holdsWrapUp === true);
  }

  /** Whether a budget asks for the final call (`wrapUp`), not only the note: each call then needs its bound. */
  get wrapsUp(): boolean {
    return this.#endings.wrapUp !== undefined;
  }

  /** A run begins: no hold, no final call yet. */
  begin(): void {
    this.#held = 0;
    this.#keptOutside = 0;
    this.#final = false;
  }

  /**
   * Lets go of the final call's hold in this process (the run ended, or the final call takes
   * its place). One kept outside is let go by its budget's owner as the run ends (`RedisBudget.settle`).
   */
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
    // The note's figures may need a round trip each; without the note, no await.
    const note = this.#endings.visible ? await budgetNoteOf(meter) : undefined;
    const flags = note instanceof OperationError ? note : note === undefined ? {} : { budgetNote: note };
    // The framework ended the run meanwhile (its loop failed or was aborted): it ended for good.
    if (!run.running) return mirrorEndedError(run.result, run.turn, run.machine.current);
    if (flags instanceof OperationError) return failedOn(run, flags);
    const wrap = this.#endings.wrapUp;
    if (this.#final) return this.#finalCall(run, boundOf, flags);
    if (wrap === undefined) return gatePlainCall(run, boundOf, needsBound, flags);
    const next = boundOf(flags);
    if (typeof next === 'string') return failed(run, noBound(next));
    let finalUsd = wrap.finalCallUsd;
    if (finalUsd === undefined) {
      // Bounded only when no `finalCallUsd` is given: each bound serializes the whole request.
      const asFinal = boundOf({ ...flags, wrapUp: wrap.instruction });
      if (typeof asFinal === 'string') return failed(run, noBound(asFinal));
      const worst = finalCallWorstCase(asFinal, next, this.#pricing);
      if (worst instanceof OperationError) return failed(run, worst.message);
      finalUsd = worst;
    }
    const nextUsd = worstCaseCost(next, this.#pricing).costUsd ?? Infinity;
    // From the final call's hold to this call's, no await: no other run takes the room between.
    const held = holdFinalCall(meter, this.#held, finalUsd, nextUsd);
    if (typeof held !== 'number') return this.#wrapUp(run, boundOf, flags, finalUsd, nextUsd, held.refused);
    this.#held = held;
    // An external budget that keeps final-call holds keeps this one beside the call, atomically.
    const outside = this.#holdsOutside;
    const gate = await gateMirrorCall(run, next, undefined, {
      wraps: true,
      ...(outside ? { wrapHold: { keepUsd: finalUsd } } : {}),
    });
    if (gate === undefined) {
      if (outside) this.#keptOutside = finalUsd;
      return flags;
    }
    if ('wrap' in gate) return this.#wrapUp(run, boundOf, flags, finalUsd, nextUsd, gate.wrap.message);
    return gate;
  }

  /** → WrappingUp: the call is made as the final call. */
  #wrapUp(
    run: MirrorMoves,
    boundOf: MirrorBoundOf,
    flags: MirrorCallFlags,
    finalUsd: number,
    nextUsd: number,
    reason: string,
  ): Promise<MirrorStop | MirrorCallFlags> {
    run.move(WRAPPING_UP, wrapUpEvent(finalUsd, nextUsd, reason));
    this.#final = true;
    return this.#finalCall(run, boundOf, flags);
  }

  /**
   * The final call: no tools, the instruction added, with the tool results it carries — the real
   * ones when they fit in the cap (and, outside the process, in the hold kept there), else
   * answers that say the budget ran out. The final call's hold is let go of just before the call's own
   * hold is taken, with no await between; outside, the final call takes the kept hold's place.
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
    const outside = this.#holdsOutside;
    if (run.operation === 'sendToolResults') {
      const room = (meter.strict ? meter.room : meter.costRoom) + this.#held;
      const fits = (b: LLMCallBound): boolean => {
        const worst = worstCaseCost(b, this.#pricing).costUsd;
        return worst !== undefined && worst <= room && !(outside && worst > this.#keptOutside);
      };
      // The first form that fits (FINAL_FORMS); the last always does, and goes unchecked.
      for (const form of FINAL_FORMS.slice(1)) {
        if (fits(bound)) break;
        Object.assign(final, form);
        bound = boundOf(final);
        if (typeof bound === 'string') return failed(run, `the final call has no bound: ${bound}`);
      }
    }
    const stop = await gateMirrorCall(run, bound, undefined, {
      handOver: () => this.release(meter),
      ...(outside ? { wrapHold: { final: true } } : {}),
    });
    return stop === undefined ? final : (stop as MirrorStop);
  }
}

/**
 * A call with no final call's hold: its bound when `needsBound` (as `flags` would send it),
 * then the gate. Resolves to the flags, or to why the run stopped (it has then ended).
 */
export async function gatePlainCall(
  run: MirrorMoves,
  boundOf: MirrorBoundOf,
  needsBound: boolean,
  flags: MirrorCallFlags,
): Promise<MirrorStop | MirrorCallFlags> {
  const bound = needsBound ? boundOf(flags) : undefined;
  const stop = await gateMirrorCall(
    run,
    typeof bound === 'object' ? bound : undefined,
    typeof bound === 'string' ? bound : undefined,
  );
  return stop === undefined ? flags : (stop as MirrorStop);
}

/**
 * The final call answered (charged and journaled): the run ends in EndOfTurn with its answer
 * (outcome `wrapped_up`), recorded as any response is; tool calls it asked for anyway stay
 * unanswered, as the adapter's do.
 */
export function wrappedUp(
  run: MirrorMoves,
  response: LLMResponse,
  problems: readonly string[],
  unknownCost: string | undefined,
): TurnResult {
  const record = run.took(response, problems, unknownCost);
  const data = { ...(record.data as Record<string, unknown>), answer: response.text ?? '' };
  return run.end(State.EndOfTurn, 'the final answer within the cap ends the turn', data, 'wrapped_up', {});
}

function noBound(why: string): string {
  return `it needs the bound of each model call, and this call has none: ${why}`;
}

/** The call cannot be planned: the run ends in Error, naming the option. */
function failed(run: MirrorMoves, why: string): MirrorStop {
  return failedOn(run, new OperationError('budget.wrapUp', new Error(why)));
}

function failedOn(run: MirrorMoves, error: OperationError): MirrorStop {
  return run.stop(run.failed(error, { operation: run.operation }));
}
