// The loose values of a history record's `data`, as the OTLP export reads them: an object, a
// non-empty string, a finite number, or undefined for anything else.

/** `value` as an object of named values (not an array), else undefined. */
export function asObject(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/** `value` if it is a non-empty string, else undefined. */
export function str(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** `value` if it is a finite number, else undefined. */
export function num(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}
