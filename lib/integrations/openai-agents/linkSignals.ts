/**
 * Aborts `controller` when any of `signals` aborts (at once for one already aborted), with the
 * reason `reasonOf` makes of that signal's. Returns the undo: the listeners removed.
 */
export function linkSignals(
  controller: AbortController,
  signals: readonly (AbortSignal | undefined)[],
  reasonOf: (reason: unknown) => unknown,
): () => void {
  const undo: (() => void)[] = [];
  for (const signal of signals) {
    if (signal === undefined) continue;
    if (signal.aborted) {
      controller.abort(reasonOf(signal.reason));
      continue;
    }
    const forward = (): void => controller.abort(reasonOf(signal.reason));
    signal.addEventListener('abort', forward, { once: true });
    undo.push(() => signal.removeEventListener('abort', forward));
  }
  return () => undo.forEach((u) => u());
}
