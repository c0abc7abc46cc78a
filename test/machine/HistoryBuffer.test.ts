import fc from 'fast-check';
import { HistoryBuffer } from '../../lib/machine/HistoryBuffer';

describe('HistoryBuffer', () => {
  it('.push() keeps the newest items, oldest first', () => {
    const buffer = new HistoryBuffer<number>(3);
    for (let i = 1; i <= 5; i++) buffer.push(i);
    expect(buffer.toArray()).toEqual([3, 4, 5]);
    expect(buffer.size).toBe(3);
  });

  it('.toArray() returns a copy', () => {
    const buffer = new HistoryBuffer<number>(2);
    buffer.push(1);
    buffer.toArray().push(99);
    expect(buffer.toArray()).toEqual([1]);
  });

  it('.resize() keeps the newest items and the order', () => {
    const buffer = new HistoryBuffer<number>(4);
    for (let i = 1; i <= 6; i++) buffer.push(i);
    buffer.resize(2);
    expect(buffer.toArray()).toEqual([5, 6]);
    buffer.push(7);
    expect(buffer.toArray()).toEqual([6, 7]);
    buffer.resize(5);
    buffer.push(8);
    expect(buffer.toArray()).toEqual([6, 7, 8]);
  });

  it('keeps everything with Infinity', () => {
    const buffer = new HistoryBuffer<number>(Infinity);
    for (let i = 0; i < 1000; i++) buffer.push(i);
    expect(buffer.size).toBe(1000);
  });

  it('always equals the last `capacity` items pushed (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 20 }),
        fc.array(fc.integer(), { maxLength: 100 }),
        fc.integer({ min: 1, max: 20 }),
        (cap, items, newCap) => {
          const buffer = new HistoryBuffer<number>(cap);
          items.forEach((i) => buffer.push(i));
          expect(buffer.toArray()).toEqual(items.slice(-cap));
          buffer.resize(newCap);
          expect(buffer.toArray()).toEqual(items.slice(-cap).slice(-newCap));
        },
      ),
    );
  });

  it('.newest() is the item pushed last, through pushes, resizes and clears (property)', () => {
    type Op = { push: number } | { resize: number } | { clear: true };
    const op: fc.Arbitrary<Op> = fc.oneof(
      { weight: 8, arbitrary: fc.integer().map((push) => ({ push })) },
      { weight: 1, arbitrary: fc.integer({ min: 1, max: 12 }).map((resize) => ({ resize })) },
      { weight: 1, arbitrary: fc.constant({ clear: true as const }) },
    );
    fc.assert(
      fc.property(fc.constantFrom(1, 2, 3, 7, Infinity), fc.array(op, { maxLength: 80 }), (cap, ops) => {
        const buffer = new HistoryBuffer<number>(cap);
        let model: number[] = [];
        let capacity = cap;
        for (const o of ops) {
          if ('push' in o) {
            buffer.push(o.push);
            model = [...model, o.push].slice(-capacity);
          } else if ('resize' in o) {
            buffer.resize(o.resize);
            capacity = o.resize;
            model = model.slice(-capacity);
          } else {
            buffer.clear();
            model = [];
          }
          expect(buffer.toArray()).toEqual(model);
          expect(buffer.size).toBe(model.length);
          expect(buffer.newest()).toBe(model.at(-1));
        }
      }),
    );
  });
});
