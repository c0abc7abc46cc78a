/**
 * A request body's max output tokens, from the first of `keys` it sets, or why it has none: a
 * request that sets none has no bound on its output (nor on its cost).
 */
export function wireMaxTokens(body: Record<string, unknown>, keys: readonly string[]): number | string {
  for (const key of keys) {
    const value = body[key];
    if (value === undefined || value === null) continue;
    if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return value;
    return `its ${key} is ${JSON.stringify(value)}, not a non-negative integer`;
  }
  return `the request sets no ${keys.join(' (or ')}${keys.length > 1 ? ')' : ''}, so its output (and its cost) has no bound: set it on the request`;
}
