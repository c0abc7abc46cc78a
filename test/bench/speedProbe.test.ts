import { speedLine, speedProbe } from '../../bench/speedProbe';

describe('speedProbe', () => {
  it('times the rounds it is asked for', () => {
    const probe = speedProbe(3);
    expect(probe.rounds).toBe(3);
    expect(probe.low).toBeGreaterThan(0);
    expect(Number.isFinite(probe.high)).toBe(true);
  });

  it('refuses a count of rounds that is not a whole number of at least 1, naming it', () => {
    expect(() => speedProbe(0)).toThrow('rounds is 0; expected a whole number of at least 1');
    expect(() => speedProbe(2.5)).toThrow('rounds is 2.5');
  });

  it('says the start alone, then the start and the end', () => {
    const start = { ms: 4.26, low: 4.01, high: 5.5, rounds: 7 };
    expect(speedLine(start)).toBe(
      'speed:   a fixed CPU workload took 4.3 ms (median of 7: 4.0–5.5) at the start; less is a faster machine',
    );
    expect(speedLine(start, { ms: 6, low: 5.9, high: 8.04, rounds: 7 })).toBe(
      'speed:   a fixed CPU workload took 4.3 ms (median of 7: 4.0–5.5) at the start, 6.0 ms (median of 7: 5.9–8.0) at the end; less is a faster machine',
    );
  });
});
