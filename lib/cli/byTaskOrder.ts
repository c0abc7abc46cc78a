/**
 * `items` in the order of the manifest's `tasks` (by `idOf`), those it does not list after them
 * by id: a batch read whole prints its runs in the same order from a folder and from a store.
 */
export function byTaskOrder<T>(items: readonly T[], idOf: (item: T) => string, tasks: readonly string[] = []): T[] {
  const place = new Map(tasks.map((id, i) => [id, i]));
  const rank = (item: T): number => place.get(idOf(item)) ?? tasks.length;
  return [...items].sort((a, b) => rank(a) - rank(b) || (idOf(a) < idOf(b) ? -1 : idOf(a) > idOf(b) ? 1 : 0));
}
