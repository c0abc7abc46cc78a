/**
 * The message of anything thrown, for people: an Error's message, a string as it is, an
 * error-like object from another realm, else its JSON. Never throws — not even for a value
 * whose message cannot be read (a throwing getter, a null-prototype object with a cycle).
 */
export function messageOf(error: unknown): string {
  try {
    if (error instanceof Error) return String(error.message);
    if (typeof error === 'string') return error;
    // Errors from other realms (a DOMException, a vm context) are not `instanceof Error`.
    if (typeof error === 'object' && error !== null && typeof (error as { message?: unknown }).message === 'string')
      return (error as { message: string }).message;
  } catch {
    return unreadable(error);
  }
  try {
    return JSON.stringify(error) ?? String(error);
  } catch {
    try {
      return String(error);
    } catch {
      return unreadable(error);
    }
  }
}

function unreadable(error: unknown): string {
  try {
    return `an unreadable ${Object.prototype.toString.call(error)} was thrown`;
  } catch {
    return 'an unreadable value was thrown';
  }
}
