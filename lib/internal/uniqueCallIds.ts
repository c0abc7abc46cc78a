/**
 * Tool-call ids that a conversation can carry: the first of each non-empty id is kept, and an
 * empty or repeated one (local models behind OpenAI-compatible servers send both) gets a fresh
 * id from `fresh`, one that no call of the response has. Without this the next request is
 * rejected: each call must be answered by exactly one result with its id. Same order as `ids`.
 */
export function uniqueCallIds(ids: readonly string[], fresh: () => string): string[] {
  // The common case (unique, non-empty ids) allocates nothing new.
  if (ids.every((id, i) => id !== '' && ids.indexOf(id) === i)) return ids as string[];
  const taken = new Set(ids);
  const seen = new Set<string>();
  return ids.map((id) => {
    if (id !== '' && !seen.has(id)) {
      seen.add(id);
      return id;
    }
    let next = fresh();
    while (taken.has(next)) next = fresh();
    taken.add(next);
    return next;
  });
}
