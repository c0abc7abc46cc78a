import { messageOf } from '../../internal/messageOf';
import type { ToolCall, ToolResult } from '../AgentLoop';
import type { JournalEntry } from '../journal/JournalEntry';
import { abortReason } from '../turn/abortReason';
import type { ToolSummary } from '../calls/runTools';
import type { MirrorToolOutcome } from './MirrorOutcomes';

/** One tool call of a mirrored response, from the moment the LLM asked for it until it is answered. */
export interface MirrorSlot {
  call: ToolCall;
  status: 'pending' | 'running' | 'ok' | 'error' | 'interrupted' | 'not_run';
  startedAt: number;
  endedAt: number;
  result?: ToolResult;
  /** The tool gave a value and `result.output` is its JSON (`MirrorToolOutcome.json`). */
  json?: true;
  note?: string;
}

/** Answers a slot with an error result that says why. */
export function answerSlot(slot: MirrorSlot, status: MirrorSlot['status'], note: string): void {
  slot.status = status;
  slot.note = note;
  slot.result = { callId: slot.call.id, output: note, isError: true };
}

/** The journal line of an answered slot (`fromJournal`: its result was served from the journal). */
export function slotLine(turn: number, slot: MirrorSlot, fromJournal = false): JournalEntry {
  return {
    ...(fromJournal ? { fromJournal: true as const } : {}),
    type: 'tool',
    turn,
    call: slot.call,
    status: slot.status as 'ok' | 'error' | 'interrupted' | 'not_run',
    startedAt: slot.startedAt,
    endedAt: slot.endedAt,
    result: slot.result!,
    ...(slot.json === true ? { json: true as const } : {}),
  };
}

/** The slots as the tools' summary in the record that follows them. */
export function slotSummary(slots: readonly MirrorSlot[]): ToolSummary[] {
  return slots.map((slot) => {
    const line: ToolSummary = {
      callId: slot.call.id,
      name: slot.call.name,
      isError: slot.result?.isError === true,
      ms: Math.max(0, slot.endedAt - slot.startedAt),
    };
    if (slot.note !== undefined && slot.status !== 'ok') line.note = slot.note;
    return line;
  });
}

/** A tool's output as text. */
export function safeText(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** A call refused at its start: answered with `note`, timed now, and journaled. */
export function refuseSlot(
  slot: MirrorSlot,
  status: 'interrupted' | 'not_run',
  note: string,
  now: number,
  journal: ((line: JournalEntry) => void) | undefined,
  turn: number,
): void {
  answerSlot(slot, status, note);
  slot.startedAt = slot.endedAt = now;
  journal?.(slotLine(turn, slot));
}

/**
 * Every call not yet answered gets `note` as its error result, and its journal line; a call
 * that was running is `interrupted`, since it may have acted.
 */
export function answerRest(
  slots: readonly MirrorSlot[],
  note: string,
  status: 'interrupted' | 'not_run',
  clock: () => number,
  journal: ((line: JournalEntry) => void) | undefined,
  turn: number,
): void {
  for (const slot of slots) {
    if (slot.result !== undefined) continue;
    const running = slot.status === 'running';
    answerSlot(slot, running ? 'interrupted' : status, running && status === 'not_run' ? `interrupted: ${note}` : note);
    if (!running) slot.startedAt = clock();
    slot.endedAt = Math.max(slot.startedAt, clock());
    journal?.(slotLine(turn, slot));
  }
}

/** A slot's call finished (`{ output, isError? }`) or threw (`{ error }`: `interrupted` when `signal` aborted), at `now`. */
export function endSlot(slot: MirrorSlot, outcome: MirrorToolOutcome, now: number, signal: AbortSignal): void {
  const callId = slot.call.id;
  slot.endedAt = Math.max(slot.startedAt, now);
  if ('error' in outcome) {
    if (signal.aborted) answerSlot(slot, 'interrupted', `interrupted: ${abortReason(signal)}`);
    else answerSlot(slot, 'error', messageOf(outcome.error));
  } else {
    const output = typeof outcome.output === 'string' ? outcome.output : safeText(outcome.output);
    slot.result = outcome.isError === true ? { callId, output, isError: true } : { callId, output };
    slot.status = outcome.isError === true ? 'error' : 'ok';
    if (outcome.json === true && outcome.isError !== true) slot.json = true;
  }
}
