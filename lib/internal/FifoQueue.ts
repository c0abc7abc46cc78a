/**
 * First in, first out, with `shift` in constant time (an array's `shift` moves every element
 * left, which a queue taking a whole file's lines one by one cannot afford).
 */
export class FifoQueue<T> {
  #items: T[] = [];
  #head = 0;

  get length(): number {
    return this.#items.length - this.#head;
  }

  push(item: T): void {
    this.#items.push(item);
  }

  /** The first item, left in the queue. */
  peek(): T | undefined {
    return this.#head < this.#items.length ? this.#items[this.#head] : undefined;
  }

  shift(): T | undefined {
    if (this.#head >= this.#items.length) return undefined;
    const item = this.#items[this.#head]!;
    this.#items[this.#head] = undefined as T; // let it go
    this.#head += 1;
    // Drop the used front once it is most of the array: amortised constant time.
    if (this.#head === this.#items.length) this.clear();
    else if (this.#head >= 1024 && this.#head * 2 >= this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
    return item;
  }

  clear(): void {
    this.#items = [];
    this.#head = 0;
  }
}
