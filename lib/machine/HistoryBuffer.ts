/**
 * The last `capacity` items, oldest first, in a ring so that adding one is O(1) and never
 * copies. `Infinity` keeps everything.
 */
export class HistoryBuffer<T> {
  #items: T[] = [];
  // Where the next item goes: the end while the ring fills, then the oldest item's slot.
  #head = 0;
  #capacity: number;

  constructor(capacity: number) {
    this.#capacity = capacity;
  }

  get capacity(): number {
    return this.#capacity;
  }

  get size(): number {
    return this.#items.length;
  }

  push(item: T): void {
    const head = this.#head;
    this.#items[head] = item; // appends while the ring fills
    this.#head = head + 1 === this.#capacity ? 0 : head + 1;
  }

  /** The item added last, if any. */
  newest(): T | undefined {
    const items = this.#items;
    if (items.length === 0) return undefined;
    return items[(this.#head === 0 ? items.length : this.#head) - 1];
  }

  /** A copy, oldest first. */
  toArray(): T[] {
    const items = this.#items;
    const head = this.#head;
    if (head === 0 || head === items.length) return items.slice();
    return items.slice(head).concat(items.slice(0, head));
  }

  /** Keeps the newest `capacity` items. */
  resize(capacity: number): void {
    const ordered = this.toArray();
    this.#items = ordered.length > capacity ? ordered.slice(ordered.length - capacity) : ordered;
    this.#head = this.#items.length === capacity ? 0 : this.#items.length;
    this.#capacity = capacity;
  }

  clear(): void {
    this.#items = [];
    this.#head = 0;
  }
}
