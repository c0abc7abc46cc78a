// The trace check's replay (test/helpers/budgetTrace.ts) refuses what the model does not allow:
// a hold let go twice, an attempt that reserves before taking the earlier one over, a hold left
// at the end. Synthetic traces of STEP, BEGIN and RECORD, as MONITOR would show them.
import { CHARGE_FIELD_NAMES } from '../../lib/internal/fieldLists';
import { replayTrace, type TracedScript } from '../helpers/budgetTrace';

const begin = (run: number, token: string): TracedScript => ({
  script: 'begin',
  keys: [],
  argv: [String(run), 'w', '1', '2', token],
});
/** STEP: charge `cost`, let go of `release`, reserve an LLM call holding `hold` (none when 0), with a wrap mode. */
const step = (run: number, cost: number, release: number, hold: number, wmode = ''): TracedScript => ({
  script: 'step',
  keys: [],
  argv: [
    String(run),
    ...CHARGE_FIELD_NAMES.map((k) => (k === 'costUsd' ? String(cost) : '0')),
    '0',
    String(release),
    hold > 0 ? 'l' : '',
    String(hold),
    ...(wmode === '' ? [] : [wmode, '0']),
  ],
});
const record = (run: number): TracedScript => ({ script: 'record', keys: [], argv: [String(run), '{}', '{}'] });

describe("the trace check's replay of the model's step relation", () => {
  it('a run that holds, is charged and settles: allowed', () => {
    const replay = replayTrace([begin(0, 'a'), step(0, 0, 0, 2), step(0, 1, 2, 0, 'd'), record(0)], 5, 0);
    expect(replay.violations).toEqual([]);
    expect(replay).toMatchObject({ spent: 1, held: 0, reservations: 1 });
  });

  it('a hold let go twice: refused', () => {
    const replay = replayTrace(
      [begin(0, 'a'), step(0, 0, 0, 2), step(0, 1, 2, 0), step(0, 0, 2, 0, 'd'), record(0)],
      5,
      0,
    );
    expect(replay.violations).toEqual(['#3 step(run 0): lets go of $2, more than the run holds ($0)']);
  });

  it('a second attempt that reserves before taking the first over: refused', () => {
    const trace = [begin(0, 'a'), step(0, 0, 0, 2), begin(0, 'b'), step(0, 0, 0, 2), step(0, 1, 2, 0, 'd'), record(0)];
    expect(replayTrace(trace, 5, 1).violations).toEqual([
      '#3 step(run 0): an attempt after the first does not begin with its takeover',
    ]);
  });

  it('a hold left at the end: refused; a hold past the cap: not granted', () => {
    const replay = replayTrace([begin(0, 'a'), step(0, 0, 0, 2), record(0)], 5, 0);
    expect(replay.violations).toEqual(['at the end: $2 still held', 'at the end: run 0 still holds $2']);
    expect(replayTrace([begin(0, 'a'), step(0, 4, 0, 2)], 5, 0).reservations).toBe(0);
  });
});
