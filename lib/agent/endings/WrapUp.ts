import type { LLMCallInput } from '../AgentEvents';
import type { AgentLoop, LLMCallBound, LLMResponse, OperationContext, Pricing } from '../AgentLoop';
import type { Budget } from '../money/Budget';
import { resolveEndings, type ResolvedEndings } from '../BudgetEndings';
import { budgetNoteOf } from './budgetNoteOf';
import { callLLM } from '../calls/callLLM';
import type { LLMOperation, LLMOutcome } from '../turn/LLMOutcome';
import { FINAL_FORMS } from './finalForms';
import { holdFinalCall } from './holdFinalCall';
import { boundLLMCall, type CallFlags, type PlannedCall } from '../calls/reserveLLMCall';
import { OperationError, type ContractViolationError } from '../TurnError';
import type { ToolSlot } from '../calls/runTools';
import { responseRecord } from '../calls/callLLM';
import type { TurnScope } from '../turn/TurnScope';
import { worstCaseCost } from '../money/worstCaseCost';

/** Input tokens kept for the budget note and the budget-ran-out answers beyond what the bound counts. */
const SLACK_TOKENS = 64;

/** The ordinary call would not fit beside the final call's hold: the turn moves to WrappingUp. */
export interface WrapDecision {
  kind: 'wrap';
  operation: LLMOperation;
  input: LLMCallInput;
  /** The WrappingUp move's description and data. */
  event: { description: string; data: Record<string, unknown> };
}

/**
 * How a turn's LLM calls end within the cap (`budget.wrapUp`) and what each carries
 * (`budget.visible`). Before each ordinary call, the worst case of a final call after it (no
 * tools, the instruction added; `finalCallUsd` when given) is held beside it — against strict
 * caps in their budgets, against others by a check — and when the ordinary call does not fit
 * beside it, the turn is told to wrap up: the hold stays until the final call's own takes its
 * place (no other run can take the room between). Internal: `TurnRunner` makes one per turn when a budget asks for it.
 */
export class WrapUp {
  readonly #scope: TurnScope;
  readonly #endings: ResolvedEndings;
  /** USD of the final call's hold kept now in the strict budgets. */
  #held = 0;
  /** USD of the final call's hold an external budget keeps (after the last ordinary call it let through). */
  #keptOutside = 0;

  constructor(scope: TurnScope, endings: ResolvedEndings) {
    this.#scope = scope;
    this.#endings = endings;
  }

  /** One for a turn whose budgets (or external budgets' `endings`) set `wrapUp` or `visible`, else undefined. */
  static for(scope: TurnScope, budgets: readonly Budget[]): WrapUp | undefined {
    // Asked every turn, and most budgets set neither: nothing is made for them.
    let asks = false;
    for (const b of budgets) if (b.limits.wrapUp !== undefined || b.limits.visible === true) asks = true;
    const outside = scope.meter.external;
    for (const b of outside) if (b.endings !== undefined) asks = true;
    if (!asks) return undefined;
    const endings = resolveEndings([...budgets.map((b) => b.limits), ...outside.map((b) => b.endings ?? {})]);
    return endings.wrapUp === undefined && !endings.visible ? undefined : new WrapUp(scope, endings);
  }

  /** One ordinary LLM call, with the final call's hold kept beside it; `wrap` when it would not fit. */
  async call(
    operation: LLMOperation,
    input: LLMCallInput,
    invoke: (ctx: OperationContext) => Promise<LLMResponse>,
  ): Promise<LLMOutcome | WrapDecision> {
    const scope = this.#scope;
    const flags = await this.#flags(undefined);
    if (flags instanceof OperationError) return { kind: 'failed', error: flags, data: { operation, failures: [] } };
    const wrap = this.#endings.wrapUp;
    // A resumed run re-driving recorded calls makes no decision again.
    if (wrap === undefined || scope.settings.recording?.serving === true)
      return callLLM(scope, operation, input, invoke, flags);
    const { meter } = scope;
    const planned = await boundLLMCall(scope, input, 1, flags, true);
    if (planned === undefined || 'kind' in planned)
      return { kind: 'failed', error: planned?.error ?? noBound(), data: { operation, failures: [] } };
    const finalUsd = wrap.finalCallUsd ?? (await this.#finalCallAfter(input, planned, flags, wrap.instruction));
    if (typeof finalUsd !== 'number') return { kind: 'failed', error: finalUsd, data: { operation, failures: [] } };
    const next = planned.worst.costUsd!;
    const held = holdFinalCall(meter, this.#held, finalUsd, next);
    if (typeof held !== 'number') return decide(operation, input, finalUsd, next, held.refused);
    this.#held = held;
    // An external budget that keeps final-call holds (a BullMQ batch's) keeps this one beside the call, atomically.
    const outside = this.#holdsOutside();
    const llm = await callLLM(scope, operation, input, invoke, flags, outside ? { keepUsd: finalUsd } : undefined);
    const refused = llm.kind === 'budget' && llm.spent.limit === 'maxCostUsd' ? llm.spent : undefined;
    // The final call's hold is kept for it.
    if (refused?.hold !== undefined && (refused.wrapsUp === true || meter.strict))
      return decide(operation, input, finalUsd, refused.hold, refused.message);
    if (outside && llm.kind === 'response') this.#keptOutside = finalUsd;
    return llm;
  }

  /**
   * The final call: no tools, the instruction added, with the results of the tool calls left
   * open — the real ones when they fit in the cap, else answers that say the budget ran out,
   * else without the last round (`ctx.withoutLastRound`).
   */
  async final(decision: WrapDecision): Promise<LLMOutcome> {
    const scope = this.#scope;
    const { meter, settings: s } = scope;
    const { operation, input } = decision;
    const asked = await this.#flags(this.#endings.wrapUp!.instruction);
    if (asked instanceof OperationError) return { kind: 'failed', error: asked, data: { operation, failures: [] } };
    let flags = asked!;
    const outside = this.#holdsOutside();
    let chosen = input;
    if (input.kind === 'tool_results') {
      // Whether the final call fits; the final call's hold is let go of as it is held (below): room for it.
      const fits = async (call: LLMCallInput, f: CallFlags): Promise<boolean> => {
        const planned = await boundLLMCall(scope, call, 1, f, true);
        if (planned === undefined || 'kind' in planned) return false;
        // Outside the process, the final call is sure to fit in the hold it takes the place of.
        if (outside && planned.worst.costUsd! > this.#keptOutside) return false;
        if (!meter.strict) return planned.worst.costUsd! <= meter.costRoom + this.#held;
        // The room beyond the final call's hold is another run's to take while a bound is awaited: what this
        // call needs beyond it (at its fewest output tokens) is held now, with no await between.
        const { bound } = planned;
        const floor = Math.min(s.minOutputTokens, bound!.maxOutputTokens);
        const need = worstCaseCost({ ...bound!, maxOutputTokens: floor }, s.pricing).costUsd;
        if (need === undefined) return false;
        if (need > this.#held) {
          if (meter.hold(need - this.#held) !== undefined) return false;
          this.#held = need;
        }
        return true;
      };
      // The first form that fits (FINAL_FORMS); the last always does, and goes unchecked.
      const last = FINAL_FORMS.length - 1;
      for (const [i, form] of FINAL_FORMS.entries()) {
        const { withheld } = form;
        chosen =
          withheld === undefined
            ? input
            : {
                kind: 'tool_results',
                results: input.results.map((r) => ({ callId: r.callId, output: withheld, isError: true })),
                messages: [],
              };
        if (form.withoutLastRound === true) flags = { ...flags, withoutLastRound: true };
        if (i === last || (await fits(chosen, flags))) break;
      }
    }
    // The final call's hold is let go of just before the final call's own hold is taken, with no await
    // between: the room it kept goes to this call and to no other run.
    return callLLM(
      scope,
      operation,
      chosen,
      invokeFor(s.agent, chosen),
      flags,
      outside ? { final: true } : undefined,
      () => this.release(),
    );
  }

  /** Whether an external budget keeps the final call's hold (it is then sent with each LLM call). */
  #holdsOutside(): boolean {
    if (this.#endings.wrapUp === undefined) return false;
    for (const b of this.#scope.meter.external) if (b.holdsWrapUp === true) return true;
    return false;
  }

  /** Releases the final call's hold (the turn ended, or the final call is being made). */
  release(): void {
    if (this.#held > 0) this.#scope.meter.release(this.#held, undefined);
    this.#held = 0;
  }

  /**
   * The request flags of a call: the budget note when `visible` (`budgetNoteOf`: an external
   * budget whose figures failed fails the call by its name), the instruction of a final call.
   */
  async #flags(wrapUp: string | undefined): Promise<CallFlags | undefined | OperationError> {
    if (!this.#endings.visible && wrapUp === undefined) return undefined;
    const flags: CallFlags = {};
    if (this.#endings.visible) {
      const note = await budgetNoteOf(this.#scope.meter);
      if (note instanceof OperationError) return note;
      flags.budgetNote = note;
    }
    if (wrapUp !== undefined) flags.wrapUp = wrapUp;
    return flags;
  }

  /**
   * The worst case of a final call made after this one: this call's request as a final call
   * (no tools, the instruction added), grown by its response (at most its max output tokens)
   * and by the answers to the tool calls it may ask for (taken to be no longer than the
   * response), plus a little for the budget note.
   */
  async #finalCallAfter(
    input: LLMCallInput,
    planned: PlannedCall,
    flags: CallFlags | undefined,
    instruction: string,
  ): Promise<number | OperationError | ContractViolationError> {
    const asFinal = await boundLLMCall(this.#scope, input, 1, { ...flags, wrapUp: instruction }, true);
    if (asFinal === undefined || 'kind' in asFinal) return asFinal?.error ?? noBound();
    return finalCallWorstCase(asFinal.bound!, planned.bound!, this.#scope.settings.pricing);
  }
}

/**
 * Pure: the worst case of a final call made after the call bounded by `next`, in USD: that
 * call's request as a final call (`asFinal`: no tools, the instruction added), grown by its
 * response (at most its max output tokens) and by the answers to the tool calls it may ask for
 * (taken to be no longer than the response), plus a little for the budget note. The adapter and
 * a mirror that makes final calls (mirrorAISDK's) hold the same.
 */
export function finalCallWorstCase(
  asFinal: LLMCallBound,
  next: LLMCallBound,
  pricing: Pricing | undefined,
): number | OperationError {
  const grown: LLMCallBound = {
    ...asFinal,
    inputTokens: asFinal.inputTokens + 2 * next.maxOutputTokens + SLACK_TOKENS,
  };
  const worst = worstCaseCost(grown, pricing);
  if (worst.costUsd === undefined)
    return new OperationError('cost', new Error(`budget.wrapUp cannot hold the final call: ${worst.why}`));
  return worst.costUsd;
}

/**
 * The final response as the turn ends with it: its text (the answer), the record's data, and
 * the tool calls it asked for anyway (left unanswered: settled when the turn ends).
 */
export function finalAnswer(llm: Extract<LLMOutcome, { kind: 'response' }>): {
  text: string;
  data: Record<string, unknown>;
  pending: ToolSlot[] | undefined;
} {
  const { text = '', toolCalls = [] } = llm.response;
  const pending =
    toolCalls.length === 0
      ? undefined
      : toolCalls.map((call): ToolSlot => ({ call, status: 'pending', startedAt: 0, endedAt: 0 }));
  const { data } = responseRecord(llm, toolCalls.length, undefined);
  return { text, data: { ...(data as Record<string, unknown>), answer: text }, pending };
}

function decide(
  operation: LLMOperation,
  input: LLMCallInput,
  finalCallUsd: number,
  nextUsd: number,
  reason: string,
): WrapDecision {
  return { kind: 'wrap', operation, input, event: wrapUpEvent(finalCallUsd, nextUsd, reason) };
}

/** The WrappingUp move's description and data: the final call's hold, the next call's worst case, and why it did not fit. */
export function wrapUpEvent(
  finalCallUsd: number,
  nextUsd: number,
  reason: string,
): { description: string; data: Record<string, unknown> } {
  return {
    description: `the next LLM call would not fit beside the final call's hold: asking for the final answer`,
    data: { finalCallUsd, nextCallUsd: nextUsd, reason },
  };
}

function invokeFor(agent: AgentLoop, input: LLMCallInput): (ctx: OperationContext) => Promise<LLMResponse> {
  return input.kind === 'user_message'
    ? (ctx) => agent.sendUserMessage(input.message, ctx)
    : (ctx) => agent.sendToolResults(input.results, input.messages, ctx);
}

function noBound(): OperationError {
  return new OperationError('llmCallBound', new Error('budget.wrapUp needs the loop to bound each request'));
}
