import fc from 'fast-check';
import { formatProgressLine, type ProgressLineFigures } from '../../lib/batch/formatProgressLine';

const figures: ProgressLineFigures = { done: 7, total: 12, failed: 1, skipped: 0, running: 3, costUsd: 0.75 };

describe('formatProgressLine', () => {
  it('says finished of all, failed, in flight and spend of the cap, then the time left', () => {
    expect(formatProgressLine({ ...figures, capUsd: 5, etaSeconds: 4, bar: '[==--]' }, 120)).toBe(
      'batch [==--] 7/12 done | 1 failed | 3 in flight | $0.7500 of $5.0000 | ETA 4s',
    );
  });

  it('says the spend alone without a cap, the skipped runs when there are some, no ETA once all ended', () => {
    expect(formatProgressLine({ ...figures, done: 12, skipped: 2, running: 0, etaSeconds: 0 }, 120)).toBe(
      'batch 12/12 done | 1 failed | 2 skipped | 0 in flight | $0.7500 spent',
    );
  });

  it.each([
    [75, '1m15s'],
    [3600 * 2 + 60 * 5, '2h05m'],
  ])('writes %p seconds left as %s', (seconds, shown) => {
    expect(formatProgressLine({ ...figures, etaSeconds: seconds }, 200)).toContain(`| ETA ${shown}`);
  });

  it('leaves the bar out first where the line would not fit, then cuts it', () => {
    const full = { ...figures, capUsd: 5, bar: '[=====-----]' };
    expect(formatProgressLine(full, 80)).toBe(
      'batch [=====-----] 7/12 done | 1 failed | 3 in flight | $0.7500 of $5.0000',
    );
    expect(formatProgressLine(full, 70)).toBe('batch 7/12 done | 1 failed | 3 in flight | $0.7500 of $5.0000');
    expect(formatProgressLine(full, 30)).toBe('batch 7/12 done | 1 failed |');
  });

  it('leaves out an ETA that is not a time', () => {
    for (const etaSeconds of [Number.NaN, Number.POSITIVE_INFINITY, -1])
      expect(formatProgressLine({ ...figures, etaSeconds }, 200)).not.toContain('ETA');
  });

  it('never fills the last column of the terminal, so that it cannot wrap (property-based)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 200 }),
        fc.nat(10_000),
        fc.double({ min: 0, max: 1e6, noNaN: true }),
        (width, n, cost) => {
          const line = formatProgressLine({ ...figures, done: n, total: n + 1, costUsd: cost, capUsd: 1e6 }, width);
          expect(line.length).toBeLessThan(width);
          expect(formatProgressLine({ ...figures, done: n, total: n + 1, costUsd: cost, capUsd: 1e6 }, 500)).toContain(
            line,
          );
        },
      ),
    );
  });
});
