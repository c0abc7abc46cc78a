import { escapeJsonText } from '../internal/escapeControl';

/**
 * JSON for the terminal that never overflows the stack: data nested deeper than JSON.stringify
 * can recurse is cut at a depth, marked. JSON escapes C0 characters; DEL, C1 and the bidi
 * controls are escaped too.
 */
export function safeJson(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value, null, 2);
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    text = JSON.stringify(limitDepth(value, 200), null, 2);
  }
  return escapeJsonText(text);
}

function limitDepth(value: unknown, depth: number): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (depth === 0) return '[nested too deep to show]';
  if (Array.isArray(value)) return value.map((v) => limitDepth(v, depth - 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = limitDepth(v, depth - 1);
  return out;
}
