/**
 * Aborts `controller` when any of `signals` aborts (at once for one already aborted), with the
 * reason `reasonOf` makes of that signal's (by default the same). Returns the undo: the
 * listeners removed, which the first abort does too. Unlike `AbortSignal.any`, which keeps every
 * signal it made for as long as a source lives (measured on Node 20: 231 MB after 200,000 of
 * them on one long-lived source), a controller undone is left to the garbage collector with
 * whatever a framework hung on its signal.
 */
export function linkSignals(
  controller: AbortController,
  signals: readonly (AbortSignal | undefined)[],
  reasonOf: (reason: unknown) => unknown = same,
): () => void {
  const linked: AbortSignal[] = [];
  const undo = (): void => {
    for (const signal of linked) signal.removeEventListener('abort', forward);
    linked.length = 0;
  };
  function forward(this: AbortSignal): void {
    undo();
    controller.abort(reasonOf(this.reason));
  }
  for (const signal of signals) {
    if (signal === undefined) continue;
    if (signal.aborted) {
      undo();
      controller.abort(reasonOf(signal.reason));
      break;
    }
    signal.addEventListener('abort', forward);
    linked.push(signal);
  }
  return undo;
}

function same(reason: unknown): unknown {
  return reason;
}
