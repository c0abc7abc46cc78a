/** An error's stack, or undefined (a non-error, or a stack getter that throws). */
export function stackOf(error: unknown): string | undefined {
  try {
    return error instanceof Error ? error.stack : undefined;
  } catch {
    return undefined;
  }
}
