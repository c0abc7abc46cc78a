import { safeStringify } from '../../internal/safeStringify';

/**
 * A tool's result as the Agents SDK gives it to the model (its `toSmartString`): a string as it
 * is, `undefined` as `'undefined'`, anything else as JSON. The journal keeps this text, so a
 * resumed run serves the model what the live run sent it (the mirror's default, JSON's `null`
 * for `undefined`, would not). Pure.
 */
export function toolText(value: unknown): string {
  return typeof value === 'string' ? value : safeStringify(value);
}
