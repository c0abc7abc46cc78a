import { formatUsd } from '../../lib/internal/formatUsd';

describe('formatUsd: one rounding for every amount of dollars', () => {
  it.each([
    [0, '$0.0000'],
    [0.083, '$0.0830'],
    [0.08346, '$0.0835'],
    [1.2, '$1.2000'],
    [99.99994, '$99.9999'],
    [123.456, '$123.46'],
    [0.000015, '$0.000015'],
  ])('%s → %s', (usd, text) => {
    expect(formatUsd(usd)).toBe(text);
  });
});
