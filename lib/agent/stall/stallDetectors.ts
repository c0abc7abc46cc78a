import { InvalidArgumentError } from '../../machine/InvalidArgumentError';
import { isHookLine } from '../../internal/isHookLine';
import type { LLMResponse, ToolCall } from '../AgentLoop';
import type { JournalEntry, LlmJournalEntry } from '../journal/JournalEntry';
import type { StallFinding } from '../StallFinding';

export type { StallFinding } from '../StallFinding';

/**
 * Whether the run is stuck, judged on its journal so far (every LLM attempt and tool call, in
 * order; the last entry is the response just received): a finding when the latest response
 * repeats itself, else undefined. Must be pure — the same journal, the same answer — so that a
 * replay of the file finds the same stalls. Must not change the journal.
 */
export type StallDetector = (journal: readonly JournalEntry[]) => StallFinding | undefined;

/** `sameToolCall()`'s `k` when not given. */
export const DEFAULT_SAME_TOOL_CALLS = 3;
/** `idleCalls()`'s `n` when not given. */
export const DEFAULT_IDLE_CALLS = 8;

/**
 * Fires when the latest response asks for a tool call that the run has asked for, with the same
 * name and the same input (compared as JSON, keys in any order), `k` times or more, this one
 * included.
 */
export function sameToolCall(k: number = DEFAULT_SAME_TOOL_CALLS): StallDetector {
  assertAtLeast(k, 2, 'sameToolCall(k)');
  const detector: StallDetector = (journal) => {
    const latest = latestResponse(journal);
    const calls = toolCallsOf(latest?.response);
    if (calls.length === 0) return undefined;
    const counts = new Map<string, number>();
    for (const entry of journal)
      for (const call of toolCallsOf(responseOf(entry))) {
        const key = callKey(call);
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
    for (const call of calls) {
      const count = counts.get(callKey(call))!;
      if (count >= k)
        return {
          detector: 'sameToolCall',
          reason: `called ${call.name} with the same input ${count} times in this run: ${stableJson(call.input)}`,
          evidence: { tool: call.name, input: call.input, count },
        };
    }
    return undefined;
  };
  return detector;
}

/** Fires when the latest response's text (not blank) is the same as the response's before it. */
export function repeatedText(): StallDetector {
  return (journal) => {
    if (latestResponse(journal) === undefined) return undefined;
    let count = 0;
    let text: string | undefined;
    // From the end back: the latest response, then as many before it with the same text.
    for (let i = journal.length - 1; i >= 0; i--) {
      const response = responseOf(journal[i]!);
      if (response === undefined) continue;
      const said = typeof response.text === 'string' ? response.text.trim() : '';
      if (text === undefined) {
        if (said === '') return undefined;
        text = said;
      } else if (said !== text) break;
      count += 1;
    }
    if (count < 2 || text === undefined) return undefined;
    return {
      detector: 'repeatedText',
      reason: `wrote the same text ${count} times in a row: ${JSON.stringify(clip(text))}`,
      evidence: { text, count },
    };
  };
}

/**
 * Fires when the last `n` LLM responses (or more) asked for no tool call the run had not asked
 * for before (same name and input). A user message starts the count again: it is new input.
 */
export function idleCalls(n: number = DEFAULT_IDLE_CALLS): StallDetector {
  assertAtLeast(n, 1, 'idleCalls(n)');
  return (journal) => {
    const seen = new Set<string>();
    let idle = 0;
    let last: LlmJournalEntry | undefined;
    for (const entry of journal) {
      const response = responseOf(entry);
      if (response === undefined) continue;
      last = entry as LlmJournalEntry;
      let fresh = false;
      for (const call of toolCallsOf(response)) {
        const key = callKey(call);
        if (!seen.has(key)) fresh = true;
        seen.add(key);
      }
      if (fresh || last.operation === 'sendUserMessage') idle = 0;
      else idle += 1;
    }
    // Only the entry just received decides: a stall found earlier is not found again by a later tool line.
    if (last === undefined || last !== latestResponse(journal) || idle < n) return undefined;
    return {
      detector: 'idleCalls',
      reason: `made ${idle} LLM calls in a row that asked for no new tool call`,
      evidence: { calls: idle },
    };
  };
}

/** The response of an LLM journal line that has one (not a failed attempt, not a ledger-only line). */
function responseOf(entry: JournalEntry): LLMResponse | undefined {
  if (entry.type !== 'llm' || entry.error !== undefined) return undefined;
  const response = entry.response;
  return typeof response === 'object' && response !== null ? response : undefined;
}

/** The journal's last LLM line with a response, when nothing but tool (and approval) lines follow it. */
function latestResponse(journal: readonly JournalEntry[]): LlmJournalEntry | undefined {
  for (let i = journal.length - 1; i >= 0; i--) {
    const entry = journal[i]!;
    if (entry.type === 'tool' || entry.type === 'approval' || isHookLine(entry)) continue;
    return responseOf(entry) === undefined ? undefined : (entry as LlmJournalEntry);
  }
  return undefined;
}

function toolCallsOf(response: LLMResponse | undefined): ToolCall[] {
  const calls = response?.toolCalls;
  if (!Array.isArray(calls)) return [];
  return calls.filter(
    (c): c is ToolCall => typeof c === 'object' && c !== null && typeof (c as ToolCall).name === 'string',
  );
}

function callKey(call: ToolCall): string {
  return `${call.name}\u0000${stableJson(call.input)}`;
}

/** JSON with object keys sorted, so that `{a, b}` and `{b, a}` are the same input. */
export function stableJson(value: unknown): string {
  if (value === undefined) return 'undefined';
  if (typeof value !== 'object' || value === null) return JSON.stringify(value) ?? String(value);
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  const keys = Object.keys(value).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${stableJson((value as Record<string, unknown>)[k])}`).join(',')}}`;
}

function clip(text: string): string {
  return text.length <= 200 ? text : `${text.slice(0, 200)}…`;
}

function assertAtLeast(value: unknown, min: number, name: string): void {
  if (!(Number.isSafeInteger(value) && (value as number) >= min))
    throw new InvalidArgumentError(name, `an integer of at least ${min}`, value);
}
