/**
 * The message of anything thrown, for people: an Error's message, a string as it is, an
 * error-like object from another realm, else its JSON. Never throws.
 */
export function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === 'string') return error;
  // Errors from other realms (a DOMException, a vm context) are not `instanceof Error`.
  if (typeof error === 'object' && error !== null && typeof (error as { message?: unknown }).message === 'string') return (error as { message: string }).message;
  try {
    return JSON.stringify(error) ?? String(error);
  } catch {
    return String(error);
  }
}
