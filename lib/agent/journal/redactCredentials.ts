/**
 * Field names whose values are credentials: an API key, a password, an authorization header,
 * a secret, a bearer or access token. Usage counters (`inputTokens`) are not: the names must
 * match whole, case and `-`/`_` aside.
 */
const CREDENTIAL =
  /^(authorization|proxy[-_]?authorization|api[-_]?key|x[-_]?api[-_]?key|password|passwd|secret|client[-_]?secret|(access|refresh|id|bearer|auth|session)[-_]?token|private[-_]?key|cookie|set[-_]?cookie)$/i;

/** What a credential's value becomes. */
export const REDACTED = '[redacted]';

/**
 * A copy of `value` with the value of every credential-named field (at any depth) replaced by
 * `[redacted]`, and credentials in URLs (`https://user:pass@host`, `redis://:pass@host`) cut
 * out. A URL's user and password hold no unescaped `"` (RFC 3986 has it percent-encoded): a match
 * never reaches out of a JSON string in the text a tool's output may be (a URL, then an e-mail
 * address further on), and a `\"` inside one is part of the password. Pure; shares nothing with
 * the input that it changed.
 */
export function redactCredentials<T>(value: T): T {
  return walk(value, 0) as T;
}

function walk(value: unknown, depth: number): unknown {
  if (typeof value === 'string')
    return value.includes('@')
      ? value.replace(/(\b[a-z][a-z0-9+.-]*:\/\/)(?:[^/\s:@"\\]|\\.)*:(?:[^/\s@"\\]|\\.)+@/gi, `$1${REDACTED}@`)
      : value;
  // Deeper than this is not a journal's data; the writer bounds nesting anyway.
  if (typeof value !== 'object' || value === null || depth > 64) return value;
  if (Array.isArray(value)) return value.map((v) => walk(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value))
    out[key] = CREDENTIAL.test(key) && v !== undefined && v !== null ? REDACTED : walk(v, depth + 1);
  return out;
}
