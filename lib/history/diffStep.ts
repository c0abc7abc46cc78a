import type { HistoryEntry } from './HistoryEntry';
import { cut } from '../internal/text';

/**
 * Fields that differ between two runs of the same work however alike they are, left out when
 * runs are compared, at any depth: timestamps (`at`, `startedAt`, `endedAt`), durations
 * (`durationMs`, `wallMs`, a tool result's `ms`, a retry's `delayMs`, which is jittered) and
 * the run's id.
 */
export const IGNORED_FIELDS: ReadonlySet<string> = new Set([
  'at',
  'startedAt',
  'endedAt',
  'durationMs',
  'wallMs',
  'ms',
  'delayMs',
  'runId',
]);

/**
 * How two runs first differ: the request sent to the model (prompt, tools, the results sent
 * back), the model's response, a tool's result, the move the machine made (or the runs' events
 * came in another order), or one run ended where the other went on.
 */
export type DivergenceKind = 'request' | 'response' | 'tool_result' | 'move' | 'end';

/** What each kind of divergence means, in words. */
export const DIVERGENCE_WORDS: Readonly<Record<DivergenceKind, string>> = {
  request: 'a different request (the prompt, the tools or what was sent back to the model changed)',
  response: 'a different response (the model answered otherwise)',
  tool_result: 'a different tool result',
  move: 'a different move (the machine went another way)',
  end: 'one run ended where the other went on',
};

/** A line of a history file as runs are compared: its kind, where it is, and what it says. */
export interface DiffStep {
  readonly kind: 'move' | 'llm' | 'tool' | 'approval' | 'http' | 'rejected' | 'reset';
  /** Its line in the file. */
  readonly line: number;
  /** The move's seq, or for the other lines the seq of the move before them. */
  readonly seq: number;
  /** The line as written (timestamps and durations included: they are left out by `sameStep`). */
  readonly value: Readonly<Record<string, unknown>>;
}

/** The step an entry is, or undefined for a line that says nothing of what the run did (the meta line, a ledger reservation). */
export function stepOf(entry: HistoryEntry): DiffStep | undefined {
  switch (entry.kind) {
    case 'record':
      return { kind: 'move', line: entry.line, seq: entry.record.seq, value: entry.record as never };
    case 'journal': {
      const { journal } = entry;
      if (journal.type === 'reserve') return undefined;
      return { kind: journal.type, line: entry.line, seq: journal.seq, value: journal };
    }
    case 'http':
      return { kind: 'http', line: entry.line, seq: entry.exchange.seq, value: entry.exchange as never };
    case 'rejected':
      return { kind: 'rejected', line: entry.line, seq: entry.rejected.seq, value: entry.rejected as never };
    case 'reset':
      return { kind: 'reset', line: entry.line, seq: entry.reset.seq, value: entry.reset as never };
    default:
      return undefined;
  }
}

const dropIgnored = (key: string, value: unknown): unknown => (IGNORED_FIELDS.has(key) ? undefined : value);

/**
 * A step's content as a string, for a digest of a run (`RunDigest`): its JSON without the
 * ignored fields, object keys sorted, so that two steps `sameStep` calls alike give the same
 * string whatever order their writer put the fields in (another version of the library may).
 */
export function stepKey(step: DiffStep): string {
  return `${step.kind}\u0000${canonicalJson(step.value, 0)}`;
}

/** JSON of a parsed value with object keys sorted and the ignored fields (and undefined ones) left out. */
function canonicalJson(value: unknown, depth: number): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (depth > 100) return '"(nested too deep)"';
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++)
      out += `${i > 0 ? ',' : ''}${value[i] === undefined ? 'null' : canonicalJson(value[i], depth + 1)}`;
    return `${out}]`;
  }
  const object = value as Record<string, unknown>;
  const keys = Object.keys(object);
  // Most objects come in one order, already sorted or not: sorted only when they are not.
  for (let i = 1; i < keys.length; i++)
    if (keys[i - 1]! > keys[i]!) {
      keys.sort();
      break;
    }
  let out = '{';
  for (const key of keys) {
    const field = object[key];
    if (field === undefined || IGNORED_FIELDS.has(key)) continue;
    out += `${out.length > 1 ? ',' : ''}${JSON.stringify(key)}:${canonicalJson(field, depth + 1)}`;
  }
  return `${out}}`;
}

/**
 * Whether two steps say the same, the ignored fields aside: compared in place, value by value,
 * without serializing them (runs in step compare every line). Key order is not compared.
 */
export function sameStep(a: DiffStep, b: DiffStep): boolean {
  return a.kind === b.kind && sameValue(a.value, b.value, 0);
}

/** Two parsed JSON values alike, the ignored fields (and undefined ones) aside. */
function sameValue(x: unknown, y: unknown, depth: number): boolean {
  if (x === y) return true;
  if (typeof x !== 'object' || typeof y !== 'object' || x === null || y === null || depth > 100) return false;
  if (Array.isArray(x)) {
    if (!Array.isArray(y) || x.length !== y.length) return false;
    for (let i = 0; i < x.length; i++) if (!sameValue(x[i], y[i], depth + 1)) return false;
    return true;
  }
  if (Array.isArray(y)) return false;
  const xs = x as Record<string, unknown>;
  const ys = y as Record<string, unknown>;
  let fields = 0;
  for (const key in xs) {
    if (IGNORED_FIELDS.has(key) || xs[key] === undefined) continue;
    fields++;
    if (!sameValue(xs[key], ys[key], depth + 1)) return false;
  }
  for (const key in ys) if (!IGNORED_FIELDS.has(key) && ys[key] !== undefined) fields--;
  return fields === 0;
}

/** What of the request an LLM line or an HTTP exchange carries. */
const REQUEST_FIELDS: Readonly<Record<string, readonly string[]>> = {
  llm: ['operation', 'attempt', 'input', 'turn', 'seq'],
  http: ['request', 'call', 'seq'],
  tool: ['call', 'turn', 'seq'],
};

/** The kind of difference between two steps that differ; `a` or `b` undefined: that run has ended. */
export function divergenceKind(a: DiffStep | undefined, b: DiffStep | undefined): DivergenceKind {
  if (a === undefined || b === undefined) return 'end';
  if (a.kind !== b.kind) return 'move';
  const request = REQUEST_FIELDS[a.kind];
  if (request === undefined) return 'move';
  const requestDiffers = request.some(
    (field) => JSON.stringify(a.value[field], dropIgnored) !== JSON.stringify(b.value[field], dropIgnored),
  );
  // A different tool call is the model's doing (its response asked for it); the same call with another result is the tool's.
  if (a.kind === 'tool') return requestDiffers ? 'response' : 'tool_result';
  return requestDiffers ? 'request' : 'response';
}

/** One field two steps hold differently: its path (`response.text`, `input.message`) and each side's value as JSON, cut. */
export interface FieldDifference {
  readonly path: string;
  /** The value in run A as JSON (`undefined` when A has no such field), at most 300 characters. */
  readonly a: string;
  readonly b: string;
}

/** The fields two values hold differently, the ignored fields aside, depth first, at most `limit` of them. */
export function differingFields(a: unknown, b: unknown, limit = 8): FieldDifference[] {
  const out: FieldDifference[] = [];
  const shown = (v: unknown): string => (v === undefined ? 'undefined' : cut(JSON.stringify(v, dropIgnored), 300));
  const walk = (x: unknown, y: unknown, path: string, depth: number): void => {
    if (out.length >= limit) return;
    const bothObjects =
      typeof x === 'object' &&
      x !== null &&
      typeof y === 'object' &&
      y !== null &&
      Array.isArray(x) === Array.isArray(y);
    if (bothObjects && depth < 20) {
      const keys = new Set([...Object.keys(x), ...Object.keys(y)]);
      for (const key of keys) {
        if (IGNORED_FIELDS.has(key)) continue;
        const sub = Array.isArray(x) ? `${path}[${key}]` : path === '' ? key : `${path}.${key}`;
        walk((x as Record<string, unknown>)[key], (y as Record<string, unknown>)[key], sub, depth + 1);
      }
      return;
    }
    if (JSON.stringify(x, dropIgnored) !== JSON.stringify(y, dropIgnored))
      out.push({ path: path === '' ? '(the whole line)' : path, a: shown(x), b: shown(y) });
  };
  walk(a, b, '', 0);
  return out;
}

/** A step as the diff shows it: where it is, and one line of what it says. */
export interface StepView {
  readonly line: number;
  readonly seq: number;
  readonly kind: DiffStep['kind'];
  /** One line, at most 240 characters, not yet escaped for a terminal. */
  readonly text: string;
  /** The line's content without the ignored fields, as JSON, at most 4,000 characters (for the HTML page). */
  readonly detail: string;
}

/** How a step is shown. */
export function stepView(step: DiffStep): StepView {
  const v = step.value;
  const json = (x: unknown, max: number): string => cut(JSON.stringify(x, dropIgnored) ?? 'undefined', max);
  let text: string;
  switch (step.kind) {
    case 'move':
      text = `move ${step.seq}  ${String(v['from'])} → ${String(v['to'])}  ${String(v['description'])}`;
      break;
    case 'llm': {
      const outcome = v['error'] !== undefined ? `failed: ${json(v['error'], 80)}` : json(v['response'], 120);
      text = `LLM ${String(v['operation'])} attempt ${String(v['attempt'])}: ${json(v['input'], 80)} → ${outcome}`;
      break;
    }
    case 'tool': {
      const call = v['call'] as { name?: unknown; id?: unknown } | undefined;
      text = `tool ${String(call?.name)} (${String(call?.id)}) ${String(v['status'])}: ${json(v['result'] ?? v['error'], 150)}`;
      break;
    }
    case 'approval':
      if (v['asked'] === true) {
        text = `${String(v['name'])} (${String(v['callId'])}) asked for approval: ${json(v['input'], 80)}`;
        break;
      }
      text = `approval of ${String(v['name'])} (${String(v['callId'])}): ${v['approved'] === true ? 'approved' : `denied: ${String(v['reason'])}`}`;
      break;
    case 'http': {
      const request = v['request'] as { method?: unknown; path?: unknown } | undefined;
      const response = v['response'] as { status?: unknown } | undefined;
      text = `HTTP ${String(request?.method)} ${String(request?.path)} → ${response === undefined ? `failed ${json(v['error'], 80)}` : String(response.status)}`;
      break;
    }
    case 'rejected':
      text = `rejected move ${String(v['from'])} → ${String(v['to'])}  ${String(v['description'])}`;
      break;
    case 'reset':
      text = `reset from ${String(v['from'])}`;
      break;
  }
  return { line: step.line, seq: step.seq, kind: step.kind, text: cut(text, 240), detail: json(v, 4000) };
}
