import fc from 'fast-check';
import { extendTable } from '../../lib/machine/extendTable';
import type { HistoryEntry } from '../../lib/history/HistoryEntry';
import { toHistoryTableInfo } from '../../lib/history/HistoryTableInfo';
import type { HistorySink } from '../../lib/machine/StateMachine';
import { StateMachine } from '../../lib/machine/StateMachine';
import type { TransitionRecord } from '../../lib/machine/TransitionRecord';
import type { TransitionTable } from '../../lib/machine/TransitionTable';
import { DEFAULT_TABLE } from '../../lib/machine/transitions';
import { HistoryValidator, validateHistory, type HistoryIssue } from '../../lib/history/validateHistory';
import { InvalidArgumentError } from '../../lib/machine/InvalidArgumentError';
import { STATE_NAMES, type StateName } from '../../states/StateName';
import { failedRun, T0 } from '../fixtures/agentRun';

/** A sink that keeps what a file would hold, as entries with line numbers. */
function entrySink(): HistorySink & { entries: HistoryEntry[] } {
  const entries: HistoryEntry[] = [];
  const line = (): number => entries.length + 1;
  return {
    entries,
    write: (record) => void entries.push({ kind: 'record', line: line(), record }),
    rejected: (e) =>
      void entries.push({
        kind: 'rejected',
        line: line(),
        rejected: {
          type: 'rejected',
          from: e.from,
          to: e.to,
          allowed: e.allowed,
          description: e.description,
          at: e.at,
          seq: 0,
        },
      }),
    reset: (info) => void entries.push({ kind: 'reset', line: line(), reset: { type: 'reset', ...info } }),
  };
}

const records = (): TransitionRecord[] => failedRun().history();

/** Entries as a file holds them: a meta line for `table`, then the entries, renumbered after it. */
function asFile(
  entries: readonly HistoryEntry[],
  table: TransitionTable<string> = DEFAULT_TABLE as TransitionTable<string>,
): HistoryEntry[] {
  const meta: HistoryEntry = {
    kind: 'meta',
    line: 1,
    table,
    meta: { type: 'meta', version: '0.1.0', runId: 'r', startedAt: T0, table: toHistoryTableInfo(table) },
  };
  return [meta, ...entries.map((e, i) => ({ ...e, line: i + 2 }))];
}
const issueCodes = (issues: readonly HistoryIssue[]): string[] => issues.map((i) => i.code);

describe('validateHistory()', () => {
  it('finds nothing wrong in a real run', () => {
    expect(validateHistory(records())).toEqual({ ok: true, records: 15, issues: [] });
  });

  it('reports an illegal move not marked forced, with what was allowed', () => {
    const rs = records();
    rs[14] = { ...rs[14]!, to: 'EndOfTurn' }; // SendingToLLM → EndOfTurn
    expect(validateHistory(rs).issues).toEqual([
      {
        code: 'illegal_move',
        seq: 15,
        from: 'SendingToLLM',
        to: 'EndOfTurn',
        allowed: ['ProcessingLLMResponse', 'Error'],
        message:
          'illegal move SendingToLLM → EndOfTurn not marked forced; SendingToLLM may only move to ProcessingLLMResponse, Error',
      },
    ]);
  });

  it('accepts the same move when it is marked forced', () => {
    const rs = records();
    rs[14] = { ...rs[14]!, to: 'EndOfTurn', forced: true };
    expect(validateHistory(rs).ok).toBe(true);
  });

  it('reports a break in the chain: from is not the previous to', () => {
    const rs = records();
    rs[5] = { ...rs[5]!, from: 'SendingToLLM', forced: true };
    expect(validateHistory(rs).issues).toEqual([
      {
        code: 'broken_chain',
        seq: 6,
        expected: 'CheckingForCancellation',
        actual: 'SendingToLLM',
        afterReset: false,
        message: 'starts from SendingToLLM, but seq 5 left the machine in CheckingForCancellation',
      },
    ]);
  });

  it('reports a gap in seq as lost records, and a repeated seq as out of order', () => {
    const rs = records();
    const gap = [...rs.slice(0, 4), ...rs.slice(4).map((r) => ({ ...r, seq: r.seq + 3 }))];
    expect(validateHistory(gap).issues).toEqual([
      { code: 'seq_gap', seq: 8, expected: 5, missing: 3, message: 'seq jumps from 4 to 8: 3 records lost' },
    ]);
    const repeat = [...rs.slice(0, 14), { ...rs[14]!, seq: 14 }];
    expect(validateHistory(repeat).issues).toEqual([
      {
        code: 'seq_out_of_order',
        seq: 14,
        expected: 15,
        message: 'seq 14 after 14: expected 15 (a record repeated or out of order)',
      },
    ]);
  });

  it('reports time going backwards', () => {
    const rs = records();
    rs[14] = { ...rs[14]!, at: rs[13]!.at - 250 };
    expect(validateHistory(rs).issues).toEqual([
      {
        code: 'time_backwards',
        seq: 15,
        at: rs[13]!.at - 250,
        previousAt: rs[13]!.at,
        message: `time goes back 250 ms: at ${rs[13]!.at - 250} after ${rs[13]!.at} (seq 14)`,
      },
    ]);
  });

  it('reports unknown states and negative durations', () => {
    const rs = records();
    rs[14] = { ...rs[14]!, to: 'Exploded' as StateName, durationMs: -5 };
    expect(issueCodes(validateHistory(rs).issues)).toEqual(['negative_duration', 'unknown_state']);
    expect(validateHistory(rs).issues[1]).toMatchObject({
      state: 'Exploded',
      field: 'to',
      message: expect.stringMatching(/^"to" is "Exploded", a state the table does not have/),
    });
  });

  it('gives the line of each problem for entries read from a file', () => {
    const sink = entrySink();
    failedRun(sink);
    const entries = sink.entries.map((e) =>
      e.kind === 'record' && e.record.seq === 15
        ? { ...e, record: { ...e.record, from: 'Ready' as StateName, forced: true } }
        : e,
    );
    expect(validateHistory(entries).issues).toEqual([
      expect.objectContaining({ code: 'broken_chain', seq: 15, line: 15 }),
    ]);
  });

  it('accepts the chain break after a reset line, and only to the initial state', () => {
    const sink = entrySink();
    let t = T0;
    const machine = new StateMachine({ clock: () => ++t, logger: false, sink });
    machine.transition('WaitingForUserInput', 'start');
    machine.transition('SendingToLLM', 'ask');
    machine.reset();
    machine.transition('WaitingForUserInput', 'start again');
    expect(validateHistory(sink.entries)).toEqual({ ok: true, records: 3, issues: [] });

    const bad = sink.entries.map((e) =>
      e.kind === 'record' && e.record.seq === 3
        ? { ...e, record: { ...e.record, from: 'SendingToLLM' as StateName, forced: true } }
        : e,
    );
    expect(validateHistory(bad).issues).toEqual([
      {
        code: 'broken_chain',
        seq: 3,
        line: 4,
        expected: 'Ready',
        actual: 'SendingToLLM',
        afterReset: true,
        message: 'starts from SendingToLLM, but the reset before it left the machine in Ready',
      },
    ]);
    // Without the reset line, the same records break the chain.
    expect(issueCodes(validateHistory(sink.entries.filter((e) => e.kind !== 'reset')).issues)).toEqual([
      'broken_chain',
    ]);
  });

  it('reports records lost at the start of a file with a meta line: a gap from seq 1 and a break from the initial state', () => {
    const sink = entrySink();
    failedRun(sink);
    const headLost = asFile(sink.entries.filter((e) => !(e.kind === 'record' && e.record.seq <= 2)));
    expect(validateHistory(asFile(sink.entries))).toEqual({ ok: true, records: 15, issues: [] });
    expect(validateHistory(headLost).issues).toEqual([
      {
        code: 'seq_gap',
        seq: 3,
        line: 2,
        expected: 1,
        missing: 2,
        message: "the file's first record is seq 3, not 1: 2 records lost at the start",
      },
      {
        code: 'broken_chain',
        seq: 3,
        line: 2,
        expected: 'Ready',
        actual: 'SendingToLLM',
        afterReset: false,
        message:
          'starts from SendingToLLM, but the first record of a file starts from the initial state Ready: records were lost at the start',
      },
    ]);
  });

  it('expects the first record after a leading reset line to follow the seq the reset gives, from the initial state', () => {
    const sink = entrySink();
    const machine = new StateMachine({ clock: () => T0, logger: false, sink });
    machine.reset();
    machine.transition('WaitingForUserInput', 'start');
    expect(validateHistory(asFile(sink.entries)).ok).toBe(true);
    const lost = asFile(
      sink.entries.map((e) =>
        e.kind === 'reset'
          ? { ...e, reset: { ...e.reset, seq: 0 } }
          : e.kind === 'record'
            ? { ...e, record: { ...e.record, seq: 4 } }
            : e,
      ),
    );
    expect(validateHistory(lost).issues).toEqual([
      expect.objectContaining({ code: 'seq_gap', seq: 4, expected: 1, missing: 3 }),
    ]);
  });

  it('lets bare records (no meta line) start anywhere: a bounded history drops its oldest', () => {
    const rs = records().slice(5);
    expect(validateHistory(rs)).toEqual({ ok: true, records: 10, issues: [] });
    const sink = entrySink();
    failedRun(sink);
    expect(validateHistory(sink.entries.slice(5)).ok).toBe(true);
  });

  it('validates against the table in the meta line, or the one given', () => {
    const table = extendTable(DEFAULT_TABLE, {
      states: [{ name: 'Compacting', description: 'c', next: ['SendingToLLM'] }],
      edges: [['WaitingForUserInput', 'Compacting']],
    });
    const machine = new StateMachine({ table, logger: false, clock: () => T0 });
    machine.transition('WaitingForUserInput', 'start');
    machine.transition('Compacting', 'compact');
    machine.transition('SendingToLLM', 'ask');
    const recs = machine.history().map((record, i): HistoryEntry => ({ kind: 'record', line: i + 2, record }));
    const meta: HistoryEntry = {
      kind: 'meta',
      line: 1,
      table,
      meta: { type: 'meta', version: '0.1.0', runId: 'r', startedAt: T0, table: toHistoryTableInfo(table) },
    };
    expect(validateHistory([meta, ...recs]).ok).toBe(true);
    expect(issueCodes(validateHistory(recs).issues)).toEqual(['unknown_state', 'unknown_state']);
    expect(issueCodes(validateHistory([meta, ...recs], DEFAULT_TABLE as TransitionTable<string>).issues)).toEqual([
      'unknown_state',
      'unknown_state',
    ]);
  });

  it('names a bad argument and its value instead of failing inside', () => {
    const rs = records();
    expect(() => validateHistory(null as never)).toThrow(
      new InvalidArgumentError('items', 'an iterable of transition records or history entries', null),
    );
    expect(() => validateHistory([rs[0]!, null] as never)).toThrow(
      'Expected `items[1]` to be a transition record or history entry, got `null`',
    );
    expect(() => validateHistory([{ seq: 1 }] as never)).toThrow(
      'Expected `items[0].from` to be a state name, got `undefined`',
    );
    expect(() => validateHistory([{ kind: 'record', line: 1, record: null }] as never)).toThrow(
      'Expected `items[0].record` to be a transition record, got `null`',
    );
    expect(() => validateHistory([{ kind: 'comment', line: 1 }] as never)).toThrow(
      /^Expected `items\[0\]\.kind` to be one of 'meta', 'record', 'rejected', 'reset'.*, got `comment` \(string\)$/,
    );
  });

  it('returns every problem at once, in record order', () => {
    const rs = records();
    rs[3] = { ...rs[3]!, durationMs: -1 };
    rs[9] = { ...rs[9]!, at: 0 };
    rs[14] = { ...rs[14]!, to: 'Ready' };
    expect(validateHistory(rs).issues.map((i) => [i.seq, i.code])).toEqual([
      [4, 'negative_duration'],
      [10, 'time_backwards'],
      [15, 'illegal_move'],
    ]);
  });
});

describe('HistoryValidator', () => {
  it('.add() takes items one at a time and .result() can be read at any point', () => {
    const validator = new HistoryValidator();
    const rs = records();
    validator.add(rs[0]!);
    expect(validator.result()).toEqual({ ok: true, records: 1, issues: [] });
    validator.add({ ...rs[2]!, seq: 2 });
    expect(validator.result()).toMatchObject({ ok: false, records: 2, issues: [{ code: 'broken_chain', seq: 2 }] });
  });

  it('.add() names a bad item', () => {
    const validator = new HistoryValidator();
    expect(() => validator.add(undefined as never)).toThrow(
      new InvalidArgumentError('item', 'a transition record or history entry', undefined),
    );
    expect(validator.result()).toEqual({ ok: true, records: 0, issues: [] });
  });
});

// ---- properties ------------------------------------------------------------------------

type Op =
  | { kind: 'legal'; pick: number; ms: number }
  | { kind: 'forced'; to: number; ms: number }
  | { kind: 'reset' }
  | { kind: 'illegal'; to: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record({ kind: fc.constant('legal' as const), pick: fc.nat(), ms: fc.nat({ max: 5000 }) }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('forced' as const),
      to: fc.nat({ max: STATE_NAMES.length - 1 }),
      ms: fc.nat({ max: 5000 }),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'reset' as const }) },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('illegal' as const), to: fc.nat({ max: STATE_NAMES.length - 1 }) }),
  },
);

/** Plays random legal, forced, rejected moves and resets through a real machine. */
function play(ops: readonly Op[]): HistoryEntry[] {
  const sink = entrySink();
  let t = T0;
  const machine = new StateMachine({ clock: () => t, logger: false, sink });
  for (const op of ops) {
    if (op.kind === 'reset') machine.reset();
    else if (op.kind === 'legal') {
      const allowed = machine.allowedFrom();
      t += op.ms;
      machine.transition(allowed[op.pick % allowed.length]!, 'legal');
    } else if (op.kind === 'forced') {
      t += op.ms;
      machine.forceTransition(STATE_NAMES[op.to]!, 'forced');
    } else {
      const to = STATE_NAMES[op.to]!;
      if (!machine.canMoveTo(to)) expect(() => machine.transition(to, 'illegal')).toThrow();
    }
  }
  return sink.entries;
}

describe('validateHistory() properties', () => {
  it('a history made by a real machine from any mix of moves, forced moves, rejections and resets validates clean', () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 80 }), (ops) => {
        const entries = play(ops);
        const result = validateHistory(entries);
        expect(result.issues).toEqual([]);
        expect(result.records).toBe(entries.filter((e) => e.kind === 'record').length);
      }),
    );
  });

  type Corruption =
    | 'seq_gap'
    | 'seq_out_of_order'
    | 'time_backwards'
    | 'broken_chain'
    | 'illegal_move'
    | 'unknown_state'
    | 'negative_duration';
  const corruptions: Corruption[] = [
    'seq_gap',
    'seq_out_of_order',
    'time_backwards',
    'broken_chain',
    'illegal_move',
    'unknown_state',
    'negative_duration',
  ];

  /** Damages a clean list of records so that exactly one problem, of `kind`, shows. Returns the seq where it shows. */
  function corrupt(rs: TransitionRecord<string>[], kind: Corruption, at: number): number {
    const last = rs.length - 1;
    const i = 1 + (at % last); // never the first record: it has nothing to be checked against
    switch (kind) {
      case 'seq_gap':
        for (let j = i; j <= last; j++) rs[j] = { ...rs[j]!, seq: rs[j]!.seq + 2 };
        return rs[i]!.seq;
      case 'seq_out_of_order':
        rs[last] = { ...rs[last]!, seq: rs[last - 1]!.seq };
        return rs[last]!.seq;
      case 'time_backwards': {
        const shift = rs[i]!.at - rs[i - 1]!.at + 1;
        for (let j = i; j <= last; j++) rs[j] = { ...rs[j]!, at: rs[j]!.at - shift };
        return rs[i]!.seq;
      }
      case 'broken_chain': {
        const wrong = STATE_NAMES.find((s) => s !== rs[i - 1]!.to)!;
        rs[i] = { ...rs[i]!, from: wrong, forced: true };
        return rs[i]!.seq;
      }
      case 'illegal_move': {
        const { from } = rs[last]!;
        const illegal = STATE_NAMES.find((s) => !DEFAULT_TABLE.states[from as StateName].next.includes(s))!;
        rs[last] = { ...rs[last]!, to: illegal, forced: false };
        return rs[last]!.seq;
      }
      case 'unknown_state':
        rs[last] = { ...rs[last]!, to: 'NoSuchState' as StateName };
        return rs[last]!.seq;
      case 'negative_duration':
        rs[i] = { ...rs[i]!, durationMs: -1 - rs[i]!.durationMs };
        return rs[i]!.seq;
    }
  }

  it('a file made by a real machine validates clean, whatever the mix of moves, rejections and resets', () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 60 }), (ops) => {
        expect(validateHistory(asFile(play(ops))).issues).toEqual([]);
      }),
    );
  });

  it('losing the first k records of a file shows as a gap from seq 1 and a break from the initial state, at seq k + 1', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ pick: fc.nat(), ms: fc.nat({ max: 5000 }) }), { minLength: 2, maxLength: 40 }),
        fc.nat(),
        (moves, cut) => {
          const entries = play(moves.map((m) => ({ kind: 'legal', ...m })));
          const k = 1 + (cut % (entries.length - 1));
          // No state leads back to Ready, so a record after the first never starts there.
          expect(validateHistory(asFile(entries.slice(k))).issues.map((issue) => [issue.code, issue.seq])).toEqual([
            ['seq_gap', k + 1],
            ['broken_chain', k + 1],
          ]);
          // The same records without the meta line are a legitimate tail of a bounded history.
          expect(validateHistory(entries.slice(k)).issues).toEqual([]);
        },
      ),
    );
  });

  it('damaging one record of a clean history yields exactly that problem, at that seq', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ pick: fc.nat(), ms: fc.nat({ max: 5000 }) }), { minLength: 2, maxLength: 60 }),
        fc.constantFrom(...corruptions),
        fc.nat(),
        (moves, kind, at) => {
          const rs = play(moves.map((m) => ({ kind: 'legal', ...m }))).flatMap((e) =>
            e.kind === 'record' ? [e.record] : [],
          );
          const seq = corrupt(rs, kind, at);
          const { issues } = validateHistory(rs);
          expect(issues.map((issue) => [issue.code, issue.seq])).toEqual([[kind, seq]]);
        },
      ),
    );
  });
});
