import { plural } from '../internal/text';
import type { ToolCall } from './AgentLoop';
import type { Attempt } from './LLMOutcome';
import { namesOf } from './namesOf';

// The records of the moves every turn makes, in one place for both drivers of a turn: the
// adapter, which calls the loop (TurnRunner), and the mirror, which hears a framework's events
// (MirrorMoves). One wording and one data shape per move, so that the same run reads the same in
// a file whichever drove it (test/engine/twoDrivers.property.test.ts checks it byte for byte).

/** A move's description and data, as `StateMachine.transition` takes them. */
export interface MoveEvent {
  description: string;
  data?: unknown;
}

/** Ready → WaitingForUserInput: the first turn. */
export const AGENT_READY = 'agent ready';
/** ToolUseRequested → CheckingForCancellation. */
export const CHECKING_CANCELLATION = 'checking for cancellation before running tools';
/** CheckingGitCommits → CheckingBudget when the round made no commit. */
export const NO_NEW_COMMITS = 'no new commits';
/** ProcessingLLMResponse → EndOfTurn. */
export const TEXT_ONLY_END = 'text-only response ends the turn';

/** A terminal state → WaitingForUserInput: turn `turn` (after the first) begins. */
export function turnStarts(turn: number): MoveEvent {
  return { description: `turn ${turn} starts`, data: { turn } };
}

/** WaitingForUserInput → SendingToLLM. */
export function sendingUserMessage(turn: number, chars: number): MoveEvent {
  return { description: 'sending the user message', data: { turn, chars } };
}

/** What the record of a response says of it. */
export interface ResponseFacts {
  attempts: number;
  failures: readonly Attempt[];
  toolCalls: number;
  model?: string | undefined;
  finishReason?: string | undefined;
  usageProblems?: readonly string[] | undefined;
  unknownCost?: string | undefined;
  fromJournal?: boolean | undefined;
  usage: unknown;
}

/** A sending state → ProcessingLLMResponse: the response, with its attempts and the usage so far. */
export function llmResponded(facts: ResponseFacts): MoveEvent {
  const data: Record<string, unknown> = { attempts: facts.attempts };
  if (facts.failures.length > 0) data.failures = facts.failures;
  data.toolCalls = facts.toolCalls;
  if (facts.model !== undefined) data.model = facts.model;
  if (facts.finishReason !== undefined) data.finishReason = facts.finishReason;
  if (facts.usageProblems !== undefined && facts.usageProblems.length > 0) data.usageProblems = facts.usageProblems;
  if (facts.unknownCost !== undefined) data.unknownCost = facts.unknownCost;
  if (facts.fromJournal === true) data.fromJournal = true;
  data.usage = facts.usage;
  return { description: 'LLM responded', data };
}

/** The calls as records list them: id and name. */
export function callList(calls: readonly ToolCall[]): Array<{ id: string; name: string }> {
  return calls.map((c) => ({ id: c.id, name: c.name }));
}

/** ProcessingLLMResponse (or Stalled) → ToolUseRequested. */
export function toolsRequested(calls: readonly ToolCall[]): MoveEvent {
  return {
    description: `LLM requested ${plural(calls.length, 'tool call')}: ${namesOf(calls)}`,
    data: { calls: callList(calls) },
  };
}

/** CheckingForCancellation (or AwaitingApproval) → RunningTool; `data` beyond the calls (concurrency, decisions). */
export function runningTools(calls: readonly ToolCall[], data: Record<string, unknown> = {}): MoveEvent {
  return { description: `running ${namesOf(calls) || 'tools'}`, data: { calls: callList(calls), ...data } };
}

/** RunningTool → CheckingGitCommits: each call's summary, and how many ended in error. */
export function toolsFinished(results: ReadonlyArray<{ isError: boolean }>): MoveEvent {
  let errors = 0;
  for (const r of results) if (r.isError) errors += 1;
  return { description: `tools finished (${errors} with errors)`, data: { results } };
}

/** CheckingBudget → GatheringAdditionalMessages. */
export function budgetHasRoom(usage: unknown): MoveEvent {
  return { description: 'budget has room', data: { usage } };
}

/** GatheringAdditionalMessages → SendingToolResults. */
export function sendingToolResults(results: number, messages: number): MoveEvent {
  return {
    description: `sending ${plural(results, 'tool result')} and ${plural(messages, 'message')}`,
    data: { results, messages },
  };
}
