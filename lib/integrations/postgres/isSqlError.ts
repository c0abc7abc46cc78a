/** An error the server answered with (a SQLSTATE), not a connection that failed or timed out. */
export function isSqlError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  // Connection exceptions (08…), a server shutting down or starting (57P0…) and a statement
  // timeout (57014) are the server not answering; the rest are answers.
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && !/^08|^57P0|^57014$/.test(code);
}
