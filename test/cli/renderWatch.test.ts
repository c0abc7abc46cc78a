import { renderWatch } from '../../lib/cli/renderWatch';
import { WatchState } from '../../lib/cli/WatchState';
import { LIMIT_NAMES } from '../../lib/internal/fieldLists';

const T = Date.UTC(2026, 0, 1, 12);
const view = {
  source: 'runs/',
  startedAt: T,
  costHistory: [],
  now: T + 300_000,
  columns: 100,
  rows: 30,
};

/** A journal line of run `a`'s file, as the watch reads it (line `n`). */
const journal = (line: Record<string, unknown>, n: number) =>
  ({ kind: 'journal', line: n, journal: { turn: 1, operation: 'sendUserMessage', ...line } }) as never;
/** A move of run `a`'s file, as the watch reads it. */
const record = (seq: number, from: string, to: string, data?: unknown) =>
  ({
    kind: 'record',
    line: seq,
    record: { seq, from, to, description: to, at: T + seq, durationMs: 1, forced: false, data },
  }) as never;

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

describe('renderWatch: a batch paused at its cap', () => {
  const paused = { at: T, capUsd: 0.02, spentUsd: 0.012, heldUsd: 0 };

  it('says it is paused, what was spent of the cap, and the agent-sm raise that lets it go on', () => {
    const state = new WatchState();
    state.tasks = ['t0', 't1', 't2'];
    const lines = renderWatch(state, { ...view, caps: { maxCostUsd: 0.02 }, paused });
    expect(lines).toContain('Paused at its cap: $0.0000 of $0.0200 ($0.0000 billed)');
    expect(lines).toContain('  raise with agent-sm raise runs/ --total-usd 0.05');
    expect(lines.find((l) => l.startsWith('Progress'))).toContain('· 3 pending ·');
  });

  it('says nothing of a pause once the batch is over', () => {
    const state = new WatchState();
    state.tasks = ['t0'];
    state.over = true;
    const lines = renderWatch(state, { ...view, caps: { maxCostUsd: 0.02 }, paused });
    expect(lines.some((l) => l.startsWith('Paused'))).toBe(false);
    expect(lines.find((l) => l.startsWith('Progress'))).toContain('· 1 skipped ·');
  });
});

describe('renderWatch: money, the three figures apart', () => {
  it('counts billed, uncertain (with why) and released by the ledger, the cap bar on billed + uncertain', () => {
    const state = new WatchState();
    state.add('a', record(1, 'Ready', 'WaitingForUserInput'));
    state.add('a', record(2, 'WaitingForUserInput', 'SendingToLLM'));
    // A 429 let go of its hold; a 500 charged at it; a call priced; a call in flight.
    state.add('a', journal({ type: 'reserve', attempt: 1, maxCostUsd: 0.05 }, 3));
    state.add('a', journal({ type: 'llm', attempt: 1, released: 'HTTP 429 is not billed', releasedUsd: 0.05 }, 4));
    state.add('a', journal({ type: 'reserve', attempt: 2, maxCostUsd: 0.05 }, 5));
    state.add(
      'a',
      journal({ type: 'llm', attempt: 2, costUsd: 0.05, chargedAtHold: 'charged at its hold: HTTP 500' }, 6),
    );
    state.add('a', journal({ type: 'reserve', attempt: 3, maxCostUsd: 0.05 }, 7));
    state.add('a', journal({ type: 'llm', attempt: 3, costUsd: 0.01 }, 8));
    state.add('a', journal({ type: 'reserve', attempt: 4, maxCostUsd: 0.05 }, 9));
    expect(state.spend).toMatchObject({ costUsd: 0.11, uncertainUsd: 0.1, releasedUsd: 0.05 });
    const lines = renderWatch(state, { ...view, columns: 140, caps: { maxCostUsd: 0.5 } });
    expect(lines.find((l) => l.startsWith('Spend'))).toContain('cost $0.1100 of $0.5000 (22%)');
    expect(lines.find((l) => l.startsWith('Money'))).toBe(
      'Money     $0.0100 billed, $0.1000 uncertain (2 LLM calls: HTTP 500; 1 other reason), $0.0500 released (not billed)',
    );
  });

  it('draws no money line before anything is spent', () => {
    expect(renderWatch(new WatchState(), { ...view, caps: {} }).some((l) => l.startsWith('Money'))).toBe(false);
  });
});

describe('renderWatch: a bar for each cap the batch has', () => {
  it('draws every limit a budget takes, each against what it counts (maxTokens was drawn by no bar before)', () => {
    const state = new WatchState();
    state.add('a', record(1, 'Ready', 'WaitingForUserInput'));
    state.add(
      'a',
      record(2, 'WaitingForUserInput', 'SendingToLLM', {
        usage: { inputTokens: 1200, outputTokens: 300, llmCalls: 1, toolCalls: 2, costUsd: 0.05 },
      }),
    );
    state.add('a', journal({ type: 'llm', attempt: 1, costUsd: 0.05 }, 3));
    const caps = { maxCostUsd: 0.5, maxTokens: 6000, maxToolCalls: 8, maxLlmCalls: 4, maxWallMs: 600_000 };
    // The test names every limit there is: a new one needs a bar (and a line here).
    expect(Object.keys(caps).sort()).toEqual([...LIMIT_NAMES].sort());
    const spend = renderWatch(state, { ...view, columns: 140, caps }).filter((l) => l.startsWith('Spend'));
    expect(spend).toHaveLength(5);
    expect(spend.find((l) => l.includes(' tokens '))).toMatch(/tokens 1,500 of 6,000 \(25%\)/);
    expect(spend.find((l) => l.includes('tool calls'))).toMatch(/tool calls 2 of 8 \(25%\)/);
    expect(spend.find((l) => l.includes('LLM calls'))).toMatch(/LLM calls 1 of 4 \(25%\)/);
    expect(spend.find((l) => l.includes('wall time'))).toMatch(/wall time .* \(50%\)/);
    expect(spend.find((l) => l.includes('cost'))).toMatch(/cost \$0\.0500 of \$0\.5000 \(10%\)/);
  });
});
