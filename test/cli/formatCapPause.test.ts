import { formatCapPause, suggestedCapUsd } from '../../lib/cli/formatCapPause';

describe('formatCapPause', () => {
  it('suggests the next round figure above the cap, one step of 1-2-5', () => {
    expect([0.02, 0.05, 0.1, 0.35, 1, 10, 30, 50, 99.99, 0.0003].map(suggestedCapUsd)).toEqual([
      0.05, 0.1, 0.2, 0.5, 2, 20, 50, 100, 100, 0.0005,
    ]);
  });

  it('names the folder as a shell takes it, the figures apart, and a cap --total-usd accepts', () => {
    const pause = { at: 0, capUsd: 0.0003, spentUsd: 0.0003, heldUsd: 0 };
    const lines = formatCapPause(pause, ["my runs/it's"], { costUsd: 0.0003, uncertainUsd: 0.0001 });
    expect(lines.paused).toBe('Paused at its cap: $0.0003 of $0.0003 ($0.0002 billed, $0.0001 uncertain)');
    expect(lines.raise).toBe(`raise with agent-sm raise 'my runs/it'\\''s' --total-usd 0.0005`);
    // A store's batch: its URL and id, each a word.
    expect(formatCapPause(pause, ['--store', 'file:///tmp/my runs', 'night'], { costUsd: 0.0003 }).raise).toBe(
      `raise with agent-sm raise --store 'file:///tmp/my runs' night --total-usd 0.0005`,
    );
  });
});
