import { STRICT_FALSE } from '../UnboundedCallsError';
import { describeValue } from '../../internal/describeValue';
import { isThenable } from '../../internal/isThenable';
import { messageOf } from '../../internal/messageOf';
import type { LLMCallInput } from '../AgentEvents';
import type { LLMCall, LLMCallBound, OperationContext, Pricing } from '../AgentLoop';
import type { SpentLimit } from '../BudgetLimits';
import { splitServerToolUses } from '../turn/checkAgentOutput';
import { outputTokensThatFit } from '../money/outputTokensThatFit';
import { ContractViolationError, OperationError } from '../TurnError';
import type { TurnScope } from '../turn/TurnScope';
import type { UsageMeter } from '../money/UsageMeter';
import { worstCaseCost, type WorstCase } from '../money/worstCaseCost';

/** The request flags of a call (`OperationContext.wrapUp`, `budgetNote`, `withoutLastRound`), given to its bound and to the call alike. */
export type CallFlags = Pick<OperationContext, 'wrapUp' | 'budgetNote' | 'withoutLastRound'>;

/** What one LLM attempt holds while it runs: release it when the attempt has ended. */
export interface Reservation {
  /** USD held against the strict budgets of this process (0 when none is strict). */
  held: number;
  /** USD held in the external budgets (given to their `reserve`), or undefined. */
  externalHold: number | undefined;
  /** The call's worst case, or undefined when unknown. */
  worstUsd: number | undefined;
  /** Why the worst case is unknown. */
  unknown: string | undefined;
  /** The request's bound (lowered when the max output tokens were), when the loop gives one. */
  bound: LLMCallBound | undefined;
  /** Set when a strict cap lowered the request's max output tokens: the loop's `ctx.maxOutputTokens`. */
  maxOutputTokens: number | undefined;
}

/** How reserving one attempt went. */
export type ReserveOutcome = { kind: 'go'; reservation: Reservation } | { kind: 'budget'; spent: SpentLimit };

/** Nothing held: no budget is strict, no ledger, no external dollar cap. */
export const NOTHING_RESERVED: Reservation = Object.freeze({
  held: 0,
  externalHold: undefined,
  worstUsd: undefined,
  unknown: undefined,
  bound: undefined,
  maxOutputTokens: undefined,
});

/** What `boundLLMCall` found: the request's bound and worst case, before anything is held. */
export interface PlannedCall {
  bound: LLMCallBound | undefined;
  worst: WorstCase;
}

/**
 * Whether the adapter's attempts need their bound and worst case: a strict cap holds it, the
 * ledger states it, an external dollar cap reserves it, and with `pricing` an attempt that ends
 * with no usage is charged at it (uncertain money, never $0), as a mirror's is.
 */
export function plansCalls(scope: TurnScope): boolean {
  const { settings: s, meter } = scope;
  return meter.strict || s.ledger !== undefined || meter.externalCapsCost || s.pricing !== undefined;
}

/**
 * Before an LLM attempt, when something needs it (`plansCalls`, or `needed`): asks the loop
 * for the request's bound and prices its worst case. Returns undefined when nothing needs it.
 * Under a strict cap, a loop without `llmCallBound` or a worst case that cannot be priced
 * fails closed (never $0).
 */
export function boundLLMCall(
  scope: TurnScope,
  input: LLMCallInput,
  attempt: number,
  flags?: CallFlags,
  needed = false,
): BoundCall | Promise<BoundCall> {
  const { settings: s, meter } = scope;
  // `needed`: a final call's hold (budget.wrapUp) needs the bound as a strict cap does.
  if (!needed && !plansCalls(scope)) return undefined;
  const strict = meter.strict || needed;
  const agent = s.agent;
  if (agent.llmCallBound === undefined) {
    if (strict)
      return {
        kind: 'failed',
        error: new OperationError(
          'llmCallBound',
          new Error(
            `a strict maxCostUsd needs the loop to bound each request (the optional operation llmCallBound); this loop has none, so no call is made (${STRICT_FALSE})`,
          ),
        ),
      };
    return { bound: undefined, worst: { costUsd: undefined, why: 'the loop has no llmCallBound' } };
  }
  const call: LLMCall =
    input.kind === 'user_message'
      ? { operation: 'sendUserMessage', message: input.message }
      : { operation: 'sendToolResults', results: input.results, messages: input.messages };
  let raw: unknown;
  try {
    raw = agent.llmCallBound(call, { signal: scope.signal, turn: scope.turn, attempt, ...flags });
  } catch (error) {
    return boundThrew(error, strict);
  }
  // A bound given at once is planned at once, so a priced attempt's gate can answer without a
  // promise (bench: turncore, where an await per attempt read 0.84× against 0.80×).
  return isThenable(raw) ? awaitBound(raw, s.pricing, strict) : planBound(raw, s.pricing, strict);
}

/** What `boundLLMCall` answers: the planned call, why it cannot be planned, or undefined when nothing needs it. */
export type BoundCall = PlannedCall | { kind: 'failed'; error: OperationError | ContractViolationError } | undefined;

async function awaitBound(
  raw: PromiseLike<unknown>,
  pricing: Pricing | undefined,
  strict: boolean,
): Promise<BoundCall> {
  let bound: unknown;
  try {
    bound = await raw;
  } catch (error) {
    return boundThrew(error, strict);
  }
  return planBound(bound, pricing, strict);
}

function boundThrew(error: unknown, strict: boolean): BoundCall {
  // Only a strict cap needs the bound; for the ledger, a loop that cannot bound this request leaves its worst case unknown.
  if (!strict)
    return { bound: undefined, worst: { costUsd: undefined, why: `llmCallBound threw: ${messageOf(error)}` } };
  return { kind: 'failed', error: new OperationError('llmCallBound', error) };
}

function planBound(raw: unknown, pricing: Pricing | undefined, strict: boolean): BoundCall {
  const problem = boundProblem(raw);
  if (problem !== undefined) return { kind: 'failed', error: new ContractViolationError('llmCallBound', problem, raw) };
  const planned = planBoundedCall(raw as LLMCallBound, pricing, strict);
  return planned instanceof OperationError ? { kind: 'failed', error: planned } : planned;
}

/**
 * Pure but for `pricing`: a bounded call's worst case. Under a strict cap, a worst case that
 * cannot be priced fails closed (an `OperationError` saying why; never $0).
 */
export function planBoundedCall(
  bound: LLMCallBound,
  pricing: Pricing | undefined,
  strict: boolean,
): PlannedCall | OperationError {
  const worst = worstCaseCost(bound, pricing);
  if (strict && worst.costUsd === undefined)
    return new OperationError(
      'cost',
      new Error(
        `a strict maxCostUsd cannot hold the worst case of this call (${bound.inputTokens} input tokens, ${bound.maxOutputTokens} max output tokens): ${worst.why}; no call is made (set pricing for the model)`,
      ),
    );
  return { bound, worst };
}

/**
 * Holds a planned call's worst case against the strict budgets of this process, at once (no
 * await between the budgets' check and the hold, so runs sharing a budget are counted one by
 * one). A worst case that does not fit lowers the request's max output tokens to what fits,
 * down to `minOutputTokens` (pass the bound's own max to never lower it); below that the call is refused (`budget`). The external budgets'
 * hold is only computed here: `UsageMeter.reserve` hands it over.
 */
export function reserveLLMCall(
  meter: UsageMeter,
  pricing: Pricing | undefined,
  minOutputTokens: number,
  planned: PlannedCall | undefined,
): ReserveOutcome {
  if (planned === undefined) return { kind: 'go', reservation: NOTHING_RESERVED };
  const external = meter.externalCapsCost;
  let { bound, worst } = planned;
  if (!meter.strict || bound === undefined || worst.costUsd === undefined)
    return {
      kind: 'go',
      reservation: {
        held: 0,
        externalHold: external ? worst.costUsd : undefined,
        worstUsd: worst.costUsd,
        unknown: worst.costUsd === undefined ? worst.why : undefined,
        bound,
        maxOutputTokens: undefined,
      },
    };
  let maxOutputTokens: number | undefined;
  const room = meter.room;
  if (worst.costUsd! > room) {
    const fit = outputTokensThatFit(bound, pricing, room, minOutputTokens);
    if (fit !== undefined && fit < bound.maxOutputTokens) {
      maxOutputTokens = fit;
      bound = { ...bound, maxOutputTokens: fit };
      worst = worstCaseCost(bound, pricing);
    }
  }
  const held = worst.costUsd!;
  const refused = meter.hold(held);
  if (refused !== undefined) return { kind: 'budget', spent: refused };
  return {
    kind: 'go',
    reservation: {
      held,
      externalHold: external ? held : undefined,
      worstUsd: held,
      unknown: undefined,
      bound,
      maxOutputTokens,
    },
  };
}

/** What is wrong with a request's bound (what `llmCallBound` returned), or undefined. */
export function boundProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null)
    return `expected { inputTokens, maxOutputTokens, model?, serverToolUses? }, got ${describeValue(value)}`;
  const v = value as Record<string, unknown>;
  for (const key of ['inputTokens', 'maxOutputTokens'] as const) {
    const n = v[key];
    if (!(typeof n === 'number' && Number.isSafeInteger(n) && n >= 0))
      return `${key} must be a non-negative integer, got ${describeValue(n)}`;
  }
  if (v.model !== undefined && typeof v.model !== 'string')
    return `model must be a string or undefined, got ${describeValue(v.model)}`;
  if (v.serverToolUses !== undefined) return splitServerToolUses(v.serverToolUses, 'serverToolUses').problems[0];
  return undefined;
}
