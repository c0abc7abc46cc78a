import { renderWatch } from '../../lib/cli/renderWatch';
import { WatchState } from '../../lib/cli/WatchState';

const T = Date.UTC(2026, 0, 1, 12);
const view = {
  source: 'runs/',
  startedAt: T,
  costHistory: [],
  now: T + 300_000,
  columns: 100,
  rows: 30,
};

describe('renderWatch', () => {
  it('shows a line per raise of a paused cap (the latest three), and the bar against the cap in force', () => {
    const raises = [0.2, 0.3, 0.4, 0.5].map((maxCostUsd, i) => ({ maxCostUsd, at: T + (i + 1) * 60_000 }));
    const lines = renderWatch(new WatchState(), { ...view, caps: { maxCostUsd: 0.5 }, raises });
    expect(lines.filter((l) => l.startsWith('Raised'))).toEqual([
      'Raised    … 1 earlier',
      'Raised    12:02:00  cap to $0.3000',
      'Raised    12:03:00  cap to $0.4000',
      'Raised    12:04:00  cap to $0.5000',
    ]);
    expect(lines.find((l) => l.startsWith('Spend'))).toContain('of $0.5000');
    // No raise, no line.
    expect(
      renderWatch(new WatchState(), { ...view, caps: { maxCostUsd: 0.1 } }).some((l) => l.startsWith('Raised')),
    ).toBe(false);
  });
});
