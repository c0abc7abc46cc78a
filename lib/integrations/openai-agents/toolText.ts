/**
 * A tool's result as the Agents SDK gives it to the model as text (its `toSmartString`): a
 * string as it is; `null`, `undefined`, numbers (`NaN` too), booleans and bigints as `String`
 * gives them; bytes (an `ArrayBuffer`, a typed array, a Buffer or its JSON) as the SDK's
 * `[byte array 0x.. (n bytes)]`; any other object as JSON, bytes inside it shown the same way,
 * and one JSON cannot hold (a cycle, a bigint) as the SDK's placeholder. The journal keeps this
 * text, so a resumed run serves the model what the live run sent it. Results the SDK sends as
 * structured content (`{ type: 'image', … }`) are served as this text. Pure.
 */
export function toolText(value: unknown): string {
  if (typeof value === 'string') return value;
  const bytes = bytesOf(value);
  if (bytes !== undefined) return byteText(bytes);
  if (typeof value !== 'object' || value === null) return String(value);
  try {
    return JSON.stringify(value, (_key, nested: unknown) => {
      const inner = bytesOf(nested) ?? serializedBuffer(nested);
      return inner === undefined ? nested : byteText(inner);
    });
  } catch {
    return '[object with circular references]';
  }
}

/** The bytes `value` holds, when it is an ArrayBuffer (shared or not) or a view of one. */
function bytesOf(value: unknown): Uint8Array | undefined {
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (typeof SharedArrayBuffer !== 'undefined' && value instanceof SharedArrayBuffer) return new Uint8Array(value);
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  return undefined;
}

/** A Buffer as JSON made it (`{ type: 'Buffer', data: [...] }`): JSON.stringify calls a Buffer's toJSON first. */
function serializedBuffer(value: unknown): Uint8Array | undefined {
  const v = value as { type?: unknown; data?: unknown } | null;
  return typeof v === 'object' && v !== null && v.type === 'Buffer' && Array.isArray(v.data)
    ? Uint8Array.from(v.data as number[])
    : undefined;
}

/** The SDK's preview of bytes: the first 20 in hex, and the length. */
function byteText(bytes: Uint8Array): string {
  if (bytes.length === 0) return '[byte array (0 bytes)]';
  const shown = Array.from(bytes.subarray(0, 20), (b) => `0x${b.toString(16).padStart(2, '0')}`).join(' ');
  return `[byte array ${shown}${bytes.length > 20 ? ' …' : ''} (${bytes.length} bytes)]`;
}
