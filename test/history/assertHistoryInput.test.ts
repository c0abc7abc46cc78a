import {
  assertHistoryItem,
  assertIterable,
  assertOptions,
  assertTableShape,
} from '../../lib/history/assertHistoryInput';
import { InvalidArgumentError } from '../../lib/machine/InvalidArgumentError';
import { DEFAULT_TABLE } from '../../lib/machine/transitions';

const record = {
  seq: 1,
  from: 'Ready',
  to: 'WaitingForUserInput',
  description: 'start',
  at: 1,
  durationMs: 0,
  forced: false,
};

describe('assertHistoryItem()', () => {
  it('accepts a bare record and each kind of history entry', () => {
    const entries = [
      record,
      { kind: 'record', line: 2, record },
      { kind: 'meta', line: 1, meta: { type: 'meta' }, table: DEFAULT_TABLE },
      { kind: 'rejected', line: 3, rejected: { type: 'rejected' } },
      { kind: 'reset', line: 4, reset: { type: 'reset' } },
    ];
    entries.forEach((entry, i) => expect(() => assertHistoryItem(entry, `items[${i}]`)).not.toThrow());
  });

  it('names the item, and the field, that is wrong', () => {
    expect(() => assertHistoryItem(null, 'items[0]')).toThrow(
      new InvalidArgumentError('items[0]', 'a transition record or history entry', null),
    );
    expect(() => assertHistoryItem([record], 'items[0]')).toThrow(
      /^Expected `items\[0\]` to be a transition record or history entry, got .* \(array\)$/,
    );
    expect(() => assertHistoryItem({ ...record, durationMs: undefined }, 'items[2]')).toThrow(
      'Expected `items[2].durationMs` to be a number, got `undefined`',
    );
    expect(() => assertHistoryItem({ kind: 'record', line: 1, record: { ...record, to: 5 } }, 'item')).toThrow(
      'Expected `item.record.to` to be a state name, got `5` (number)',
    );
    expect(() => assertHistoryItem({ kind: 'meta', line: 1, meta: {} }, 'item')).toThrow(
      'Expected `item.table` to be a transition table { initial, states }, got `undefined`',
    );
    expect(() => assertHistoryItem({ kind: 'reset', line: 1 }, 'item')).toThrow(
      'Expected `item.reset` to be a reset marker { from, at, seq }, got `undefined`',
    );
  });
});

describe('assertIterable()', () => {
  it('accepts arrays, sets and generators, and names anything else (a string included)', () => {
    function* none(): Generator<never> {}
    for (const ok of [[], new Set(), none()]) expect(() => assertIterable(ok, 'items', 'an iterable')).not.toThrow();
    for (const bad of [undefined, null, 42, 'Ready', {}])
      expect(() => assertIterable(bad, 'items', 'an iterable')).toThrow(InvalidArgumentError);
  });
});

describe('assertOptions()', () => {
  it('accepts an object and names anything else', () => {
    expect(() => assertOptions({})).not.toThrow();
    expect(() => assertOptions([], 'opts')).toThrow('Expected `opts` to be an object, got `[]` (array)');
  });
});

describe('assertTableShape()', () => {
  it('accepts the default table and names a table without initial, states or next lists', () => {
    expect(() => assertTableShape(DEFAULT_TABLE, 'table')).not.toThrow();
    expect(() => assertTableShape({ states: {} }, 'table')).toThrow(
      'Expected `table` to be a transition table { initial, states }, got `{"states":{}}` (object)',
    );
    expect(() => assertTableShape({ initial: 'A', states: { A: null } }, 'options.table')).toThrow(
      'Expected `options.table.states.A` to be a state spec { name, description, next: string[] }, got `null`',
    );
  });
});
