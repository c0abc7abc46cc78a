/**
 * JSON for logs and tables that never throws: BigInts as `10n` strings, cycles as
 * "[Circular]", and values JSON has no text for (a function, undefined) as `String(value)`.
 */
export function safeStringify(value: unknown): string {
  const seen = new WeakSet<object>();
  try {
    const text = JSON.stringify(value, (_key, v: unknown) => {
      if (typeof v === 'bigint') return `${v}n`;
      if (typeof v === 'object' && v !== null) {
        if (seen.has(v)) return '[Circular]';
        seen.add(v);
      }
      return v;
    }) as string | undefined;
    return text ?? String(value);
  } catch (error) {
    return `[unserializable: ${error instanceof Error ? error.message : String(error)}]`;
  }
}
