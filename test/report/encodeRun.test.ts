import { collectRun } from '../../lib/report/collectRun';
import { encodeRun, stateOrder, StringTable } from '../../lib/report/encodeRun';
import { failedRun, T0 } from '../fixtures/agentRun';

describe('StringTable', () => {
  it('.id() gives each distinct string one index', () => {
    const t = new StringTable();
    expect([t.id('a'), t.id('b'), t.id('a'), t.id('')]).toEqual([0, 1, 0, 2]);
    expect(t.strings).toEqual(['a', 'b', '']);
  });
});

describe('encodeRun', () => {
  it('encodeRun() writes moves as numbers into the string table, times from the run’s start, data cut', () => {
    const facts = collectRun(failedRun().history());
    const strings = new StringTable();
    const run = encodeRun(facts, strings, 20);
    expect(run.t0).toBe(T0);
    expect(run.m).toHaveLength(facts.records.length);
    const last = run.m.at(-1)!;
    const record = facts.records.at(-1)!;
    expect(last.slice(0, 5)).toEqual([
      record.seq,
      strings.id('SendingToLLM'),
      strings.id('Error'),
      record.at - T0,
      30_000,
    ]);
    expect(strings.strings[last[5]!]).toBe('LLM request failed');
    expect(strings.strings[last[6]!]).toBe('{"status":529,"mess…');
    expect(run.m[0]![6]).toBe(-1);
    expect(run.r).toEqual([]);
  });

  it('stateOrder() pairs each state with its kind', () => {
    expect(stateOrder(['A', 'SendingToLLM'], { SendingToLLM: 'llm' })).toEqual([
      ['A', 'other'],
      ['SendingToLLM', 'llm'],
    ]);
  });
});
