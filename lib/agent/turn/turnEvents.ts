import { plural } from '../../internal/text';
import type { ToolCall } from '../AgentLoop';
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

/**
 * A sending state → ProcessingLLMResponse: the response, with its attempts and the usage so far.
 * Its data is built key by key, in this order, from arguments rather than an object of them:
 * this runs on every response.
 */
export function llmResponded(
  attempts: number,
  failures: readonly Attempt[],
  toolCalls: number,
  response: { model?: string | undefined; finishReason?: string | undefined },
  usageProblems: readonly string[] | undefined,
  unknownCost: string | undefined,
  fromJournal: boolean | undefined,
  usage: unknown,
): MoveEvent {
  const data: Record<string, unknown> = { attempts };
  if (failures.length > 0) data.failures = failures;
  data.toolCalls = toolCalls;
  if (response.model !== undefined) data.model = response.model;
  if (response.finishReason !== undefined) data.finishReason = response.finishReason;
  if (usageProblems !== undefined && usageProblems.length > 0) data.usageProblems = usageProblems;
  if (unknownCost !== undefined) data.unknownCost = unknownCost;
  if (fromJournal === true) data.fromJournal = true;
  data.usage = usage;
  return { description: 'LLM responded', data };
}

/** The calls as records list them: id and name. */
export function callList(calls: readonly ToolCall[]): CallList {
  return calls.map((c) => ({ id: c.id, name: c.name }));
}

/** The calls of a response, as the records of their round list them. */
export type CallList = Array<{ id: string; name: string }>;

/** ProcessingLLMResponse (or Stalled) → ToolUseRequested. */
export function toolsRequested(calls: readonly ToolCall[]): MoveEvent & { data: { calls: CallList } } {
  return {
    description: `LLM requested ${plural(calls.length, 'tool call')}: ${namesOf(calls)}`,
    data: { calls: callList(calls) },
  };
}

/**
 * CheckingForCancellation (or AwaitingApproval) → RunningTool; `extra`: data beyond the calls
 * (concurrency, decisions); `list`: the calls' list when the round made it already.
 */
export function runningTools(
  calls: readonly ToolCall[],
  extra?: Record<string, unknown>,
  list: CallList = callList(calls),
): MoveEvent {
  const data = extra === undefined ? { calls: list } : Object.assign({ calls: list }, extra);
  return { description: `running ${namesOf(calls) || 'tools'}`, data };
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
