import { assertIterable } from './assertHistoryInput';
import type { HistoryItem } from './HistoryEntry';

/** A history held whole (an array, `loadHistory(file).entries`) or read as it goes (`readHistory(file)`). */
export type HistoryItems = Iterable<HistoryItem> | AsyncIterable<HistoryItem>;

/** A reader that takes a history one item at a time, then gives what it found. */
export interface ItemReader<R> {
  add(item: HistoryItem, name: string): void;
  result(): R;
}

const isAsyncIterable = (items: unknown): items is AsyncIterable<HistoryItem> =>
  items !== null &&
  typeof items === 'object' &&
  typeof (items as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === 'function';

/**
 * Feeds every item to the reader `start` makes, and returns its result: at once for an
 * iterable, as a promise for an async one. So one function reads a history in memory and a
 * file of any size streamed by `readHistory`, in constant memory, with no second name for it.
 */
export function feedItems<R>(items: HistoryItems, start: () => ItemReader<R>): R | Promise<R> {
  if (isAsyncIterable(items)) {
    const reader = start();
    return (async () => {
      let index = 0;
      for await (const item of items) reader.add(item, `items[${index++}]`);
      return reader.result();
    })();
  }
  assertIterable(items, 'items', 'an iterable of transition records or history entries');
  const reader = start();
  let index = 0;
  for (const item of items) reader.add(item, `items[${index++}]`);
  return reader.result();
}
