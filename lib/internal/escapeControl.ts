// Control characters (C0, DEL, C1) anywhere a string reaches a terminal: ESC sequences clear
// screens and set window titles, and a line break inside a field forges a line of output.
// Also U+2028/U+2029, which some terminals and editors treat as line breaks, and the
// bidirectional-text controls (U+061C, U+200E/U+200F, U+202A–U+202E, U+2066–U+2069), which
// reorder what a line shows ("Trojan Source"): a description could read as something it is not.
// eslint-disable-next-line no-control-regex -- control characters are what it escapes
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/g;
// eslint-disable-next-line no-control-regex -- control characters are what it escapes
const CONTROL_TEST = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/;

const SHORT: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t', '\b': '\\b', '\f': '\\f' };

function escapeOne(char: string): string {
  return SHORT[char] ?? `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/**
 * `text` with every control character shown escaped, as JSON shows it (`\n`, `\u001b`), so it
 * prints as one inert line. Text without any is returned as it is.
 */
export function escapeControl(text: string): string {
  return CONTROL_TEST.test(text) ? text.replace(CONTROL, escapeOne) : text;
}

/**
 * A copy of a plain value (objects, arrays) with every string, keys included, passed through
 * `escapeControl`; `skip` names keys whose values are kept as they are (to be escaped later,
 * after their own formatting). Other values (numbers, class instances) are kept.
 */
export function escapeDeep<T>(value: T, skip: ReadonlySet<string> = new Set(), depth = 0): T {
  if (typeof value === 'string') return escapeControl(value) as T;
  if (typeof value !== 'object' || value === null || depth > 50) return value;
  if (Array.isArray(value)) return value.map((v: unknown) => escapeDeep(v, skip, depth + 1)) as T;
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto !== Object.prototype && proto !== null) return value;
  const out: Record<string, unknown> = proto === null ? (Object.create(null) as Record<string, unknown>) : {};
  for (const [key, v] of Object.entries(value))
    out[escapeControl(key)] = skip.has(key) ? v : escapeDeep(v, skip, depth + 1);
  return out as T;
}

/**
 * JSON text (from JSON.stringify, whose strings already escape C0 characters) with the
 * characters JSON leaves raw — DEL, C1, U+2028/U+2029, the bidi controls — escaped too;
 * structural line breaks stay.
 */
export function escapeJsonText(text: string): string {
  return text.replace(/[\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/g, escapeOne);
}
