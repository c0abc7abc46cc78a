import { formatDuration } from '../../lib/internal/formatDuration';

describe('formatDuration()', () => {
  it.each([
    [0, '0 ms'],
    [0.25, '0.25 ms'],
    [350, '350 ms'],
    [2400, '2.4 s'],
    [59_949, '59.9 s'],
    [185_000, '3 minutes 5 seconds'],
    [3_720_000, '1 hour 2 minutes'],
    [-1500, '-1.5 s'],
    [Number.NaN, 'NaN'],
  ])('formats %p ms as %p', (ms, expected) => {
    expect(formatDuration(ms)).toBe(expected);
  });
});
