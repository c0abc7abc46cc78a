import { responseUsage } from '../internal/fieldLists';
import { messageOf } from '../internal/messageOf';
import type { LLMCallInput } from './AgentEvents';
import { safeLog } from './AgentLogger';
import type { LLMResponse, OperationContext, Usage } from './AgentLoop';
import type { SpentLimit } from './BudgetLimits';
import { llmResponseProblem, splitUsage } from './checkAgentOutput';
import { planRetry } from './planRetry';
import { priceResponse } from './priceResponse';
import { ContractViolationError, LLMCallError, OperationError } from './TurnError';
import { journalError, type LlmJournalEntry } from './JournalEntry';
import type { TurnScope } from './TurnScope';
import type { UsageDelta } from './UsageTotals';

/** One failed attempt, as the record after the call keeps it. */
export interface Attempt {
  attempt: number;
  error: string;
  delayMs?: number;
  retryAfterMs?: number;
  noRetry?: string;
}

/** What a response's record notes beside its usage: malformed usage fields, an unknown cost. */
export interface ResponseNotes {
  usageProblems?: readonly string[];
  unknownCost?: string;
}

/** How one LLM call (with its retries) ended; the turn makes the move that follows. */
export type LLMOutcome =
  | { kind: 'response'; response: LLMResponse; attempts: number; failures: Attempt[]; notes: ResponseNotes | undefined }
  /** The turn was aborted (cancelled, or its deadline passed); `data` goes in the record. */
  | { kind: 'aborted'; data: Record<string, unknown> }
  /** A budget was spent before an attempt: no further call was made. */
  | { kind: 'budget'; spent: SpentLimit; failures: Attempt[] }
  | { kind: 'failed'; error: LLMCallError | OperationError | ContractViolationError; data: Record<string, unknown> };

export type LLMOperation = 'sendUserMessage' | 'sendToolResults';

/** Charged before every attempt; budgets only read a delta. */
const ONE_LLM_CALL: UsageDelta = Object.freeze({ llmCalls: 1 });

/**
 * One LLM call with retries: the budgets are checked (and external ones reserved) before each
 * attempt, every attempt is counted and charged, its response priced and checked against the
 * contract, and a failure retried by the plan (`planRetry`). Reports `llmAttempt` events.
 */
export async function callLLM(
  scope: TurnScope,
  operation: LLMOperation,
  input: LLMCallInput,
  invoke: (ctx: OperationContext) => Promise<LLMResponse>,
): Promise<LLMOutcome> {
  const { settings: s, meter, signal, turn } = scope;
  const failures: Attempt[] = [];
  for (let attempt = 1; ; attempt++) {
    if (signal.aborted) return { kind: 'aborted', data: { failures } };
    const spent = meter.spent() ?? (meter.hasExternal ? await meter.reserve('llm') : undefined);
    if (spent instanceof OperationError) return { kind: 'failed', error: spent, data: { operation, failures } };
    if (spent !== undefined) return { kind: 'budget', spent, failures };
    meter.charge(ONE_LLM_CALL, false);
    // The meter has just read the clock, unless an external budget was awaited since.
    const startedAt = meter.hasExternal ? s.clock() : meter.lastReading;
    const settled = await scope.settle(invoke, attempt);
    const endedAt = s.clock();
    // The attempt's journal line: what it carried, then its response or its error.
    const journal = (outcome: Pick<LlmJournalEntry, 'response' | 'costUsd' | 'error'>): void =>
      s.journal?.({ type: 'llm', turn, operation, attempt, startedAt, endedAt, input, ...outcome });
    if (settled.kind === 'abandoned' || (settled.kind === 'threw' && signal.aborted)) {
      const error = settled.kind === 'threw' ? settled.error : new Error(`abandoned: ${scope.reason()}`);
      journal({ error: journalError(error) });
      s.emit('llmAttempt', { turn, operation, attempt, startedAt, endedAt, input, error, willRetry: false });
      return { kind: 'aborted', data: { attempt, failures } };
    }
    if (settled.kind === 'value') {
      const value: unknown = settled.value;
      // Usage the response reports was paid for, even if the rest of it is malformed.
      const reported: unknown =
        typeof value === 'object' && value !== null ? (value as { usage?: unknown }).usage : undefined;
      const model: unknown =
        typeof value === 'object' && value !== null ? (value as { model?: unknown }).model : undefined;
      const { valid, problems } = splitUsage(reported);
      const priced = priceResponse(valid, typeof model === 'string' ? model : undefined, operation, {
        pricing: s.pricing,
        onUnknownCost: s.onUnknownCost,
        capsCost: meter.caps('maxCostUsd'),
        capsTokens: meter.caps('maxTokens'),
      });
      meter.charge(responseUsage(valid, priced.costUsd));
      // As the loop returned it, malformed or not, so that a replay meets what this run met.
      journal(
        priced.costUsd === undefined
          ? { response: value as LLMResponse }
          : { response: value as LLMResponse, costUsd: priced.costUsd },
      );
      const problem = llmResponseProblem(value);
      // Whether code of others (pricing, a logger, listeners) may have run since endedAt was read.
      let othersRan = valid.costUsd === undefined || problems.length > 0;
      if (s.hears('llmAttempt')) {
        othersRan = true;
        const usage: Usage =
          priced.costUsd === undefined || priced.costUsd === valid.costUsd
            ? valid
            : { ...valid, costUsd: priced.costUsd };
        const outcome =
          problem === undefined
            ? { response: value as LLMResponse }
            : { error: new ContractViolationError(operation, problem, value) };
        s.emit('llmAttempt', {
          turn,
          operation,
          attempt,
          startedAt,
          endedAt,
          input,
          ...outcome,
          willRetry: false,
          usage,
        });
      }
      if (problems.length > 0)
        safeLog(
          s.logger,
          'warn',
          `${operation} reported malformed usage (charged its valid fields): ${problems.join('; ')}`,
          { turn },
        );
      // Without external budgets there is nothing to wait for: only the wall time to charge.
      if (!meter.hasExternal) meter.chargeWall(othersRan ? s.clock() : endedAt);
      else {
        const external = await meter.flush();
        if (external instanceof OperationError) return { kind: 'failed', error: external, data: { operation } };
      }
      if (problem !== undefined)
        return {
          kind: 'failed',
          error: new ContractViolationError(operation, problem, value),
          data: { operation, problem },
        };
      // The response's own usage, apart from the run's total that the record ending the turn carries as `usage`.
      if (priced.error !== undefined)
        return { kind: 'failed', error: priced.error, data: { operation, responseUsage: valid } };
      let notes: ResponseNotes | undefined;
      if (problems.length > 0) notes = { usageProblems: problems };
      if (priced.note !== undefined) {
        (notes ??= {}).unknownCost = priced.note;
        if (!s.warned.unknownCost) {
          s.warned.unknownCost = true;
          safeLog(s.logger, 'warn', priced.note, { turn });
        }
      }
      return { kind: 'response', response: value as LLMResponse, attempts: attempt, failures, notes };
    }
    const failure: Attempt = { attempt, error: messageOf(settled.error) };
    failures.push(failure);
    journal({ error: journalError(settled.error) });
    const plan = planRetry(settled.error, attempt, s.retry, s.random, s.clock);
    const willRetry = plan.kind === 'wait';
    if (plan.kind === 'wait' || plan.kind === 'refused') {
      if (plan.retryAfterMs !== undefined) failure.retryAfterMs = plan.retryAfterMs;
    }
    if (plan.kind === 'refused') failure.noRetry = plan.why;
    s.emit('llmAttempt', { turn, operation, attempt, startedAt, endedAt, input, error: settled.error, willRetry });
    if (plan.kind === 'error') return { kind: 'failed', error: plan.error, data: { operation, failures } };
    if (plan.kind !== 'wait')
      return {
        kind: 'failed',
        error: new LLMCallError(operation, failures, settled.error),
        data: { operation, failures },
      };
    failure.delayMs = plan.ms;
    safeLog(s.logger, 'warn', `${operation} attempt ${attempt} failed (${failure.error}); retrying in ${plan.ms} ms`, {
      turn,
    });
    await s.sleep(plan.ms, signal);
  }
}

/**
 * The data of the record of the move after a response (ProcessingLLMResponse): attempts,
 * failures, tool calls, model, finish reason, notes, and the agent's usage so far. Built key
 * by key, in this order, rather than with spreads: this runs on every response.
 */
export function responseRecordData(
  llm: Extract<LLMOutcome, { kind: 'response' }>,
  toolCalls: number,
  usage: unknown,
): Record<string, unknown> {
  const { response, notes } = llm;
  const data: Record<string, unknown> = { attempts: llm.attempts };
  if (llm.failures.length > 0) data.failures = llm.failures;
  data.toolCalls = toolCalls;
  if (response.model !== undefined) data.model = response.model;
  if (response.finishReason !== undefined) data.finishReason = response.finishReason;
  if (notes?.usageProblems !== undefined) data.usageProblems = notes.usageProblems;
  if (notes?.unknownCost !== undefined) data.unknownCost = notes.unknownCost;
  data.usage = usage;
  return data;
}
