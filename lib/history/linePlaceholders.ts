import { messageOf } from '../internal/messageOf';
import type { JournalLine } from '../machine/StateMachine';
import type { TransitionRecord } from '../machine/TransitionRecord';
import { overLineLimit } from './maxLineBytes';

/**
 * A record's data too large to write: its small top-level fields (an outcome, the usage, a
 * turn, a limit: what readers count; at most 32, each under 1,024 characters of JSON, an
 * eighth of the line limit in all) and a
 * `dropped` note saying why the rest is gone.
 */
export function dataPlaceholder(data: unknown, why: string, budget: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  // Characters of JSON kept in all: at most 3 bytes each, well under the line's limit.
  let left = budget;
  if (typeof data === 'object' && data !== null && !Array.isArray(data)) {
    let kept = 0;
    for (const key in data) {
      if (kept === 32 || key === 'dropped' || key.length > 64) continue;
      let json: string | undefined;
      try {
        json = JSON.stringify((data as Record<string, unknown>)[key]);
      } catch {
        continue;
      }
      if (json === undefined || json.length > 1024 || json.length + key.length > left) continue;
      out[key] = JSON.parse(json) as unknown;
      left -= json.length + key.length;
      kept++;
    }
  }
  out['dropped'] = why;
  return out;
}

/**
 * A text kept in a line whose content had to be dropped, cut to `chars` (at most 3 bytes
 * each), marked when it was.
 */
export function cut(text: string, chars = 4096): string {
  if (text.length <= chars) return text;
  // Never split a surrogate pair.
  const end = chars > 0 && /[\ud800-\udbff]/.test(text[chars - 1]!) ? chars - 1 : chars;
  return `${text.slice(0, end)}… [${(text.length - end).toLocaleString('en-US')} more characters dropped]`;
}

/** How many characters of a text a line cut for `maxLineBytes` keeps: a small share of it. */
export function cutChars(maxLineBytes: number): number {
  return Math.min(4096, Math.floor(maxLineBytes / 32));
}

const KNOWN_JOURNAL_FIELDS = [
  'type',
  'seq',
  'turn',
  'operation',
  'attempt',
  'startedAt',
  'endedAt',
  'status',
  'costUsd',
  'maxCostUsd',
];

/**
 * A journal line too long to write, without its content: the fields readers check and count
 * (kind, seq, turn, times, operation, attempt, the call's id and name, status, cost, the
 * error's name and message, cut) and a `dropped` note saying why.
 */
export function journalPlaceholder(line: Record<string, unknown>, why: string, chars: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  // A few fields at most: every string is cut, and a line with many is cut to the known ones.
  const keys = Object.keys(line);
  for (const key of keys.length > 16 ? KNOWN_JOURNAL_FIELDS.filter((k) => k in line) : keys) {
    const value = line[key];
    if (typeof value === 'number' || typeof value === 'boolean') out[cut(key, 64)] = value;
    else if (typeof value === 'string') out[cut(key, 64)] = cut(value, chars);
  }
  const call = line['call'] as Record<string, unknown> | undefined;
  if (typeof call === 'object' && call !== null)
    out['call'] = { id: cut(String(call['id']), chars), name: cut(String(call['name']), chars) };
  const error = line['error'] as Record<string, unknown> | undefined;
  if (typeof error === 'object' && error !== null)
    out['error'] = { name: cut(String(error['name']), chars), message: cut(String(error['message']), chars) };
  out['dropped'] = `content dropped: ${why}`;
  return out;
}

/** A number, string or boolean as JSON; a non-finite number as `null`, as JSON.stringify writes it. */
export function jsonValue(value: unknown): string {
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : 'null';
  return JSON.stringify(value) ?? 'null';
}

/**
 * The line written for a record too long to write: its move kept, its description cut and its
 * data replaced by a placeholder saying `why`. Made before it is appended: making it may run a
 * caller's code (a toJSON) that writes.
 */
export function recordPlaceholderLine(
  record: TransitionRecord<string>,
  why: string,
  maxLineBytes: number,
): { line: string; short: string } {
  const { seq, from, to, description, at, durationMs, forced, data } = record;
  const short = cut(typeof description === 'string' ? description : String(description), cutChars(maxLineBytes));
  const dataPart =
    data === undefined
      ? ''
      : `,"data":${JSON.stringify(dataPlaceholder(data, `data dropped: ${why}`, Math.floor(maxLineBytes / 8)))}`;
  const line = `{"seq":${jsonValue(seq)},"from":${jsonValue(from)},"to":${jsonValue(to)},"description":${JSON.stringify(short)},"at":${jsonValue(at)},"durationMs":${jsonValue(durationMs)},"forced":${forced === true}${dataPart}}\n`;
  return { line, short };
}

/**
 * A journal line's JSON, placed after record `seq`: content JSON cannot represent becomes a
 * placeholder (`failure` says why), and a line over `maxLineBytes` keeps only what readers count
 * (`tooLong` says why).
 */
export function journalLineText(
  entry: JournalLine,
  seq: number,
  maxLineBytes: number,
): { text: string; tooLong?: string; failure?: unknown } {
  const { type, ...rest } = entry as JournalLine & Record<string, unknown>;
  let text: string;
  let failure: unknown;
  try {
    text = JSON.stringify({ type, seq, ...rest });
  } catch (error) {
    failure = error;
    text = JSON.stringify({ type, seq, unserializable: messageOf(error) });
  }
  if (!overLineLimit(text, maxLineBytes - 1)) return failure === undefined ? { text } : { text, failure };
  const why = `the line was ${Buffer.byteLength(text, 'utf8').toLocaleString('en-US')} bytes, over the ${maxLineBytes.toLocaleString('en-US')}-byte line limit readers take`;
  return {
    text: JSON.stringify(journalPlaceholder({ type, seq, ...rest }, why, cutChars(maxLineBytes))),
    tooLong: `a ${String(type)} journal line after record ${seq} is too long to write: ${why}; it was written with its content replaced by a placeholder`,
    ...(failure === undefined ? {} : { failure }),
  };
}
