/**
 * `data[key]` when `data` is a plain object, else undefined: a record's data is whatever the
 * caller attached, so a reader asks for a field without trusting its shape.
 */
export function dataField(data: unknown, key: string): unknown {
  return typeof data === 'object' && data !== null && !Array.isArray(data)
    ? (data as Record<string, unknown>)[key]
    : undefined;
}
