import { createHash } from 'node:crypto';
import type { OtlpAnyValue, OtlpKeyValue } from './OtlpJson';

/** The latest time OTLP can carry: 2^64 - 1 nanoseconds after the epoch (in 2554), in milliseconds. */
export const MAX_OTLP_MS = 18_446_744_073_709;

const MAX_NANOS = 2n ** 64n - 1n;

/** Attribute values to OTLP key-values; `undefined` values are left out. */
export function attrs(values: Record<string, string | number | boolean | string[] | undefined>): OtlpKeyValue[] {
  const out: OtlpKeyValue[] = [];
  for (const [key, value] of Object.entries(values)) {
    // JSON cannot carry NaN or Infinity (they would become null): such a value is left out.
    if (value === undefined || (typeof value === 'number' && !Number.isFinite(value))) continue;
    out.push({ key, value: anyValue(value) });
  }
  return out;
}

function anyValue(value: string | number | boolean | string[]): OtlpAnyValue {
  if (Array.isArray(value)) return { arrayValue: { values: value.map((v) => ({ stringValue: v })) } };
  if (typeof value === 'string') return { stringValue: value };
  if (typeof value === 'boolean') return { boolValue: value };
  // int64 as a decimal string only when exact; a larger whole number stays a double.
  return Number.isSafeInteger(value) ? { intValue: String(value) } : { doubleValue: value };
}

/**
 * Epoch milliseconds (possibly fractional) as OTLP's decimal nanoseconds, exactly: always an
 * unsigned 64-bit integer. Callers check times first (see `OtlpSpanStream`); what slips past
 * is clamped into range here, so no output is ever negative, over 2^64 - 1 or not a number.
 */
export function nanos(ms: number): string {
  if (Number.isNaN(ms) || ms <= 0) return '0';
  if (ms >= MAX_OTLP_MS + 1) return MAX_NANOS.toString();
  const whole = Math.floor(ms);
  const ns = BigInt(whole) * 1_000_000n + BigInt(Math.round((ms - whole) * 1e6));
  return (ns > MAX_NANOS ? MAX_NANOS : ns).toString();
}

/** A deterministic, non-zero hex id of `length` digits. */
export function hexId(seed: string, length: 16 | 32): string {
  const hex = createHash('sha256').update(seed).digest('hex').slice(0, length);
  return /^0+$/.test(hex) ? `${'0'.repeat(length - 1)}1` : hex;
}
