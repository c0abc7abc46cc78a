import { describeValue } from '../internal/describeValue';
import { isHookLine } from '../internal/isHookLine';
import type {
  HistoryEntry,
  HistoryMeta,
  HttpExchangeLine,
  JournalLineRead,
  RejectedMove,
  ResetMarker,
} from './HistoryEntry';
import { STATE_ACTIVITIES, tableFromHistoryInfo, type HistoryTableInfo } from './HistoryTableInfo';
import type { StateActivity } from '../../states/AgentState';
import { InvalidTableError } from '../machine/InvalidTableError';
import type { TransitionRecord } from '../machine/TransitionRecord';
import type { TransitionTable } from '../machine/TransitionTable';

/** The result of parsing one line: the entry, or in words why the line is not one. */
export type ParsedHistoryLine = { ok: true; entry: HistoryEntry } | { ok: false; reason: string };

/** A field that is not what a history line needs; caught below and turned into a reason. */
class BadField extends Error {}

/**
 * Parses one line of a JSON Lines history file: a transition record (no `type`), or a line
 * marked `type: 'meta' | 'rejected' | 'reset'`, a journal line (`type: 'llm' | 'tool' | 'reserve' |
 * 'approval'`), or an
 * HTTP exchange `recordFetch` wrote (`type: 'http'`). Every field is checked, so a record that
 * parses is a record the analysis can trust; the reason names the bad field and its value.
 * Fields a record does not have are dropped. Pure: `readHistory` adds the file and I/O.
 */
export function parseHistoryLine(text: string, line: number): ParsedHistoryLine {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, reason: `not JSON (${error instanceof Error ? error.message : String(error)})` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, reason: `expected a JSON object, got ${describeValue(value)}` };
  }
  const obj = value as Record<string, unknown>;
  try {
    switch (obj.type) {
      case undefined:
        return { ok: true, entry: { kind: 'record', line, record: parseRecord(obj) } };
      case 'meta': {
        const { meta, table } = parseMeta(obj);
        return { ok: true, entry: { kind: 'meta', line, meta, table } };
      }
      case 'rejected':
        return { ok: true, entry: { kind: 'rejected', line, rejected: parseRejected(obj) } };
      case 'reset':
        return { ok: true, entry: { kind: 'reset', line, reset: parseReset(obj) } };
      case 'llm':
      case 'tool':
      case 'reserve':
      case 'approval':
        return { ok: true, entry: { kind: 'journal', line, journal: parseJournal(obj, obj.type) } };
      case 'http':
        return { ok: true, entry: { kind: 'http', line, exchange: parseHttp(obj) } };
      default:
        return {
          ok: false,
          reason: `unknown line type ${describeValue(obj.type)} (expected meta, rejected, reset, llm, tool, reserve, approval, http, or none for a record)`,
        };
    }
  } catch (error) {
    if (error instanceof BadField) return { ok: false, reason: error.message };
    throw error;
  }
}

function parseRecord(obj: Record<string, unknown>): TransitionRecord<string> {
  const seq = positiveInteger(obj, 'seq');
  const from = stateName(obj, 'from');
  const to = stateName(obj, 'to');
  const description = string(obj, 'description');
  const at = finite(obj, 'at');
  const durationMs = finite(obj, 'durationMs');
  const forced = boolean(obj, 'forced');
  // Same shape and property order as the machine's own records.
  return obj.data === undefined
    ? { seq, from, to, description, at, durationMs, forced }
    : { seq, from, to, description, at, durationMs, forced, data: obj.data };
}

/** A journal line: the fields readers rely on are checked, the content is kept as written. */
function parseJournal(obj: Record<string, unknown>, type: JournalLineRead['type']): JournalLineRead {
  nonNegativeInteger(obj, 'seq');
  positiveInteger(obj, 'turn');
  if (type === 'approval') {
    // A person's answer to a call that waited: which call, how, and when; or (`asked: true`)
    // that a call's tool asked inside itself, with no answer yet.
    string(obj, 'callId');
    string(obj, 'name');
    if (obj.asked !== undefined && obj.asked !== true)
      throw bad('asked', 'true (a question asked inside a tool), or absent (an answer)', obj.asked);
    if (obj.asked === true) {
      if (obj.approved !== undefined)
        throw bad(
          'approved',
          'absent on a line with asked: true (the question; its answer is a line of its own)',
          obj.approved,
        );
    } else boolean(obj, 'approved');
    finite(obj, 'at');
    if (obj.reason !== undefined) string(obj, 'reason');
    if (obj.by !== undefined) string(obj, 'by');
    return obj as unknown as JournalLineRead;
  }
  if (type === 'reserve') {
    // The ledger's line: the attempt it reserves, when, and the amount (absent when unknown).
    finite(obj, 'at');
    operation(obj);
    positiveInteger(obj, 'attempt');
    const max = obj.maxCostUsd;
    if (max !== undefined && !(typeof max === 'number' && Number.isFinite(max) && max >= 0))
      throw bad('maxCostUsd', 'a non-negative number of USD, or absent when unknown', max);
    return obj as unknown as JournalLineRead;
  }
  finite(obj, 'startedAt');
  finite(obj, 'endedAt');
  if (type === 'llm') {
    operation(obj);
    positiveInteger(obj, 'attempt');
  } else {
    const call = obj.call;
    if (typeof call !== 'object' || call === null || Array.isArray(call))
      throw bad('call', 'an object { id, name, input? }', call);
    string(call as Record<string, unknown>, 'id', 'call.id');
    string(call as Record<string, unknown>, 'name', 'call.name');
    string(obj, 'status');
  }
  return obj as unknown as JournalLineRead;
}

/** The loop's operation, or the hook whose budgeted call a ledger line records. */
function operation(obj: Record<string, unknown>): void {
  const op = obj.operation;
  if (op !== 'sendUserMessage' && op !== 'sendToolResults' && !isHookLine(obj))
    throw bad('operation', "'sendUserMessage', 'sendToolResults', or a hook ('compact', 'runTool')", op);
}

/** An HTTP exchange: what a replay matches on is checked, the bodies are kept as written. */
function parseHttp(obj: Record<string, unknown>): HttpExchangeLine {
  nonNegativeInteger(obj, 'seq');
  positiveInteger(obj, 'call');
  finite(obj, 'startedAt');
  finite(obj, 'endedAt');
  const request = obj.request;
  if (typeof request !== 'object' || request === null || Array.isArray(request))
    throw bad('request', 'an object { method, path, query?, body? }', request);
  string(request as Record<string, unknown>, 'method', 'request.method');
  string(request as Record<string, unknown>, 'path', 'request.path');
  const response = obj.response;
  if (response !== undefined) {
    if (typeof response !== 'object' || response === null || Array.isArray(response))
      throw bad('response', 'an object { status, headers, body }', response);
    const r = response as Record<string, unknown>;
    if (typeof r.status !== 'number' || !Number.isInteger(r.status) || r.status < 100 || r.status > 599)
      throw bad('response.status', 'an HTTP status (100 to 599)', r.status);
    if (typeof r.headers !== 'object' || r.headers === null || Array.isArray(r.headers))
      throw bad('response.headers', 'an object of header names and values', r.headers);
    string(r, 'body', 'response.body');
  } else if (typeof obj.error !== 'object' || obj.error === null) {
    throw bad('error', 'an object { name, message } (an exchange without a response says why)', obj.error);
  }
  return obj as unknown as HttpExchangeLine;
}

function parseMeta(obj: Record<string, unknown>): { meta: HistoryMeta; table: TransitionTable<string> } {
  const version = string(obj, 'version');
  const runId = string(obj, 'runId');
  const startedAt = finite(obj, 'startedAt');
  const raw = obj.table;
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw bad('table', 'an object { initial, states, edges, terminal, error }', raw);
  const t = raw as Record<string, unknown>;
  const base = {
    initial: stateName(t, 'initial', 'table.initial'),
    states: stringArray(t, 'states', 'table.states'),
    edges: edgeArray(t, 'edges', 'table.edges'),
    terminal: stringArray(t, 'terminal', 'table.terminal'),
    error: stringArray(t, 'error', 'table.error'),
  };
  const activities = t.activities;
  if (activities !== undefined) {
    if (typeof activities !== 'object' || activities === null || Array.isArray(activities))
      throw bad('table.activities', 'an object { state: activity }', activities);
    for (const [state, activity] of Object.entries(activities))
      if (!STATE_ACTIVITIES.includes(activity as StateActivity))
        throw bad(`table.activities.${state}`, `one of ${STATE_ACTIVITIES.join(', ')}`, activity);
  }
  const info: HistoryTableInfo =
    activities === undefined ? base : { ...base, activities: activities as Record<string, StateActivity> };
  let table: TransitionTable<string>;
  try {
    table = tableFromHistoryInfo(info);
  } catch (error) {
    if (!(error instanceof InvalidTableError)) throw error;
    throw new BadField(`the table in the meta line is not sound: ${error.issues.map((i) => i.message).join('; ')}`);
  }
  const meta: HistoryMeta =
    obj.metadata === undefined
      ? { type: 'meta', version, runId, startedAt, table: info }
      : { type: 'meta', version, runId, startedAt, table: info, metadata: obj.metadata };
  return { meta, table };
}

function parseRejected(obj: Record<string, unknown>): RejectedMove {
  return {
    type: 'rejected',
    from: stateName(obj, 'from'),
    to: stateName(obj, 'to'),
    allowed: stringArray(obj, 'allowed'),
    description: string(obj, 'description'),
    at: finite(obj, 'at'),
    seq: obj.seq === undefined ? 0 : nonNegativeInteger(obj, 'seq'),
  };
}

function parseReset(obj: Record<string, unknown>): ResetMarker {
  return { type: 'reset', from: stateName(obj, 'from'), at: finite(obj, 'at'), seq: nonNegativeInteger(obj, 'seq') };
}

function bad(field: string, expected: string, value: unknown): BadField {
  return new BadField(`field "${field}" must be ${expected}, got ${describeValue(value)}`);
}

function string(obj: Record<string, unknown>, key: string, field = key): string {
  const v = obj[key];
  if (typeof v !== 'string') throw bad(field, 'a string', v);
  return v;
}

function stateName(obj: Record<string, unknown>, key: string, field = key): string {
  const v = obj[key];
  if (typeof v !== 'string' || v === '') throw bad(field, 'a state name', v);
  return v;
}

function finite(obj: Record<string, unknown>, key: string): number {
  const v = obj[key];
  if (typeof v !== 'number' || !Number.isFinite(v)) throw bad(key, 'a finite number', v);
  return v;
}

function positiveInteger(obj: Record<string, unknown>, key: string): number {
  const v = obj[key];
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 1) throw bad(key, 'a positive integer', v);
  return v;
}

function nonNegativeInteger(obj: Record<string, unknown>, key: string): number {
  const v = obj[key];
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) throw bad(key, 'a non-negative integer', v);
  return v;
}

function boolean(obj: Record<string, unknown>, key: string): boolean {
  const v = obj[key];
  if (typeof v !== 'boolean') throw bad(key, 'true or false', v);
  return v;
}

function stringArray(obj: Record<string, unknown>, key: string, field = key): string[] {
  const v = obj[key];
  if (!Array.isArray(v) || !v.every((s) => typeof s === 'string' && s !== ''))
    throw bad(field, 'an array of state names', v);
  return v as string[];
}

function edgeArray(obj: Record<string, unknown>, key: string, field = key): Array<[string, string]> {
  const v = obj[key];
  const isEdge = (e: unknown): boolean =>
    Array.isArray(e) && e.length === 2 && e.every((s) => typeof s === 'string' && s !== '');
  if (!Array.isArray(v) || !v.every(isEdge)) throw bad(field, 'an array of [from, to] pairs', v);
  return v as Array<[string, string]>;
}
