import { describeValue } from '../../lib/internal/describeValue';

describe('describeValue()', () => {
  it.each([
    [0, '`0` (number)'],
    [Number.NaN, '`NaN` (number)'],
    ['10', '`10` (string)'],
    [null, '`null`'],
    [undefined, '`undefined`'],
    [[1, 2], '`[1,2]` (array)'],
    [{ a: 1 }, '`{"a":1}` (object)'],
    [function named() {}, '`[function named]` (function)'],
    [10n, '`10` (bigint)'],
  ])('renders %p as %s', (value, expected) => {
    expect(describeValue(value)).toBe(expected);
  });

  it('cuts long values and survives cycles', () => {
    expect(describeValue('x'.repeat(200))).toBe(`\`${'x'.repeat(77)}...\` (string)`);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(describeValue(cyclic)).toBe('`[object Object]` (object)');
  });
});
