import { REDACTED } from '../agent/journal/redactCredentials';

/**
 * Where two JSON values first differ, as a path from `root` (`body.messages[3].content`) and
 * both sides, or undefined when they are equal. Object keys are compared in the recorded
 * value's order, then keys only the other has; a recorded `[redacted]` matches any value, since
 * a recording keeps no credentials to compare. Pure.
 */
export function firstJsonDifference(
  recorded: unknown,
  sent: unknown,
  root: string,
): { path: string; recorded: unknown; sent: unknown } | undefined {
  if (recorded === REDACTED) return undefined;
  if (Object.is(recorded, sent)) return undefined;
  const here = { path: root, recorded, sent };
  if (typeof recorded !== 'object' || typeof sent !== 'object' || recorded === null || sent === null) return here;
  if (Array.isArray(recorded) !== Array.isArray(sent)) return here;
  if (Array.isArray(recorded) && Array.isArray(sent)) {
    for (let i = 0; i < Math.max(recorded.length, sent.length); i++) {
      const inner = firstJsonDifference(recorded[i], sent[i], `${root}[${i}]`);
      if (inner !== undefined) return inner;
    }
    return undefined;
  }
  const a = recorded as Record<string, unknown>;
  const b = sent as Record<string, unknown>;
  const keys = [...Object.keys(a), ...Object.keys(b).filter((k) => !Object.hasOwn(a, k))];
  for (const key of keys) {
    const step = /^[A-Za-z_$][\w$]*$/.test(key) ? `${root}.${key}` : `${root}[${JSON.stringify(key)}]`;
    const inner = firstJsonDifference(a[key], b[key], step);
    if (inner !== undefined) return inner;
  }
  return undefined;
}
