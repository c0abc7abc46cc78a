/**
 * The last `capacity` items, oldest first, in a ring so that adding one is O(1) and never
 * copies. `Infinity` keeps everything.
 */
export class HistoryBuffer<T> {
  #items: T[] = [];
  #head = 0; // index of the oldest item once the ring is full
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
    const items = this.#items;
    if (items.length < this.#capacity) {
      items.push(item);
      return;
    }
    items[this.#head] = item;
    this.#head = this.#head + 1 === items.length ? 0 : this.#head + 1;
  }

  /** A copy, oldest first. */
  toArray(): T[] {
    const items = this.#items;
    if (this.#head === 0) return items.slice();
    return items.slice(this.#head).concat(items.slice(0, this.#head));
  }

  /** Keeps the newest `capacity` items. */
  resize(capacity: number): void {
    const ordered = this.toArray();
    this.#items = ordered.length > capacity ? ordered.slice(ordered.length - capacity) : ordered;
    this.#head = 0;
    this.#capacity = capacity;
  }

  clear(): void {
    this.#items = [];
    this.#head = 0;
  }
}
