/**
 * Renders a value for an error message so the reader sees both what it was and its type:
 * `` `10` (string) ``, `` `NaN` (number) ``, `` `null` ``. Long values are cut so a message
 * stays one line.
 */
export function describeValue(value: unknown): string {
  if (value === null) return '`null`';
  if (value === undefined) return '`undefined`';
  const type = typeof value;
  let shown: string;
  if (type === 'string') shown = value as string;
  else if (type === 'function') shown = `[function ${(value as { name?: string }).name || 'anonymous'}]`;
  else if (type === 'object') {
    try {
      shown = JSON.stringify(value) ?? String(value);
    } catch {
      shown = Object.prototype.toString.call(value);
    }
  } else shown = String(value);
  if (shown.length > 80) shown = `${shown.slice(0, 77)}...`;
  return `\`${shown}\` (${Array.isArray(value) ? 'array' : type})`;
}
