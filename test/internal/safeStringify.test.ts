import { safeStringify } from '../../lib/internal/safeStringify';

describe('safeStringify()', () => {
  it('never throws: BigInts as strings, cycles marked', () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    expect(safeStringify({ n: 10n, cyclic })).toBe('{"n":"10n","cyclic":{"a":1,"self":"[Circular]"}}');
  });

  it('gives text for what JSON has none for', () => {
    expect(safeStringify(undefined)).toBe('undefined');
    expect(safeStringify(() => 1)).toBe('() => 1');
    expect(safeStringify([1, 'a'])).toBe('[1,"a"]');
  });
});
