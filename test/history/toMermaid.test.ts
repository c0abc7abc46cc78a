import fc from 'fast-check';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { extendTable } from '../../lib/machine/extendTable';
import type { HistoryEntry } from '../../lib/history/HistoryEntry';
import { toHistoryTableInfo } from '../../lib/history/HistoryTableInfo';
import { StateMachine } from '../../lib/machine/StateMachine';
import { historyToGantt, historyToMermaid, toMermaid } from '../../lib/history/toMermaid';
import type { TransitionTable } from '../../lib/machine/TransitionTable';
import { tableEdges } from '../../lib/machine/TransitionTable';
import { DEFAULT_TABLE } from '../../lib/machine/transitions';
import { scriptedMachine, T0 } from '../fixtures/agentRun';

describe('toMermaid()', () => {
  it('draws the sixteen-state table: the start, then one line per edge, in table order', () => {
    const text = toMermaid();
    const lines = text.split('\n');
    expect(lines.slice(0, 3)).toEqual(['stateDiagram-v2', '    [*] --> Ready', '    Ready --> WaitingForUserInput']);
    expect(lines.slice(2)).toEqual(tableEdges(DEFAULT_TABLE).map(([from, to]) => `    ${from} --> ${to}`));
    expect(lines).toHaveLength(2 + 26);
  });

  it('is the diagram in docs/machine.md, between the mermaid:table markers', () => {
    const readme = fs.readFileSync(path.join(__dirname, '..', '..', 'docs', 'machine.md'), 'utf8');
    const block = /<!-- mermaid:table:start -->\s*```mermaid\n([\s\S]*?)\n```\s*<!-- mermaid:table:end -->/.exec(
      readme,
    );
    if (block === null)
      throw new Error(
        'docs/machine.md has no ```mermaid block between <!-- mermaid:table:start --> and <!-- mermaid:table:end -->: paste the output of toMermaid() there',
      );
    expect(block[1]).toBe(toMermaid());
  });

  it('declares states whose names are not plain identifiers', () => {
    const table = extendTable(DEFAULT_TABLE, {
      states: [{ name: 'Awaiting review', description: 'a person checks', next: ['SendingToLLM'] }],
      edges: [['ProcessingLLMResponse', 'Awaiting review']],
    });
    const lines = toMermaid(table as TransitionTable<string>).split('\n');
    expect(lines[1]).toBe('    state "Awaiting review" as s1');
    expect(lines).toContain('    ProcessingLLMResponse --> s1');
    expect(lines).toContain('    s1 --> SendingToLLM');
  });
});

/** Reads a stateDiagram back: its edges by state name, through the `state "name" as id` lines. */
function edgesOf(diagram: string): Array<[string, string]> {
  const names = new Map<string, string>();
  const edges: Array<[string, string]> = [];
  for (const line of diagram.split('\n')) {
    const declared = /^ {4}state "(.*)" as (\S+)$/.exec(line);
    if (declared !== null) {
      expect(names.has(declared[2]!)).toBe(false); // an id is declared once
      names.set(declared[2]!, declared[1]!);
      continue;
    }
    const edge = /^ {4}(\S+) --> (\S+?)(?: : .*)?$/.exec(line);
    if (edge !== null && edge[1] !== '[*]')
      edges.push([names.get(edge[1]!) ?? edge[1]!, names.get(edge[2]!) ?? edge[2]!]);
  }
  return edges;
}

describe('bad arguments', () => {
  it('toMermaid() names a value that is not a table', () => {
    expect(() => toMermaid(null as never)).toThrow(
      'Expected `table` to be a transition table { initial, states }, got `null`',
    );
    expect(() => toMermaid({ initial: 'A', states: { A: { name: 'A' } } } as never)).toThrow(
      'Expected `table.states.A` to be a state spec { name, description, next: string[] }, got `{"name":"A"}` (object)',
    );
  });

  it('historyToMermaid() and historyToGantt() name bad items and options', () => {
    for (const draw of [historyToMermaid, historyToGantt]) {
      expect(() => draw(null as never)).toThrow(
        'Expected `items` to be an iterable of transition records or history entries, got `null`',
      );
      expect(() => draw([undefined] as never)).toThrow(
        'Expected `items[0]` to be a transition record or history entry, got `undefined`',
      );
      expect(() => draw([], null as never)).toThrow('Expected `options` to be an object, got `null`');
      expect(() => draw([], { table: 'default' } as never)).toThrow(
        'Expected `options.table` to be a transition table { initial, states }, got `default` (string)',
      );
    }
    expect(() => historyToGantt([], { title: 7 } as never)).toThrow(
      'Expected `options.title` to be a string, got `7` (number)',
    );
  });
});

describe('Mermaid state ids', () => {
  it('toMermaid() never gives a declared state the id of a state literally named like one (s1)', () => {
    const table = extendTable(DEFAULT_TABLE, {
      states: [
        { name: 'Compacting step', description: 'x', next: ['s1'] },
        { name: 's1', description: 'y', next: ['SendingToLLM'] },
      ],
      edges: [['ProcessingLLMResponse', 'Compacting step']],
    });
    const lines = toMermaid(table as TransitionTable<string>).split('\n');
    expect(lines[1]).toBe('    state "Compacting step" as s2');
    expect(lines).toContain('    ProcessingLLMResponse --> s2');
    expect(lines).toContain('    s2 --> s1');
    expect(lines).toContain('    s1 --> SendingToLLM');
    expect(edgesOf(lines.join('\n'))).toEqual(tableEdges(table));
  });

  it('historyToMermaid() keeps apart a declared state and a state named s1 that only the records use', () => {
    const table = extendTable(DEFAULT_TABLE, {
      states: [{ name: 'Awaiting review', description: 'x', next: ['SendingToLLM'] }],
      edges: [['ProcessingLLMResponse', 'Awaiting review']],
    });
    const records = [{ seq: 1, from: 'Ready', to: 's1', description: '', at: 1, durationMs: 0, forced: true }];
    const diagram = historyToMermaid(records, { table: table as TransitionTable<string> });
    expect(diagram.split('\n')).toContain('    state "Awaiting review" as s2');
    expect(edgesOf(diagram)).toEqual([...tableEdges(table), ['Ready', 's1']]);
  });

  it('toMermaid() draws every edge between the right states, whatever the names', () => {
    const name = fc.string({ unit: fc.constantFrom('s', '1', '2', '_', ' ', '-', 'a'), minLength: 1, maxLength: 4 });
    fc.assert(
      fc.property(fc.uniqueArray(name, { minLength: 1, maxLength: 10 }), (names) => {
        // A ring, so every state has an edge.
        const states = Object.fromEntries(
          names.map((n, i) => [n, { name: n, description: '', next: [names[(i + 1) % names.length]!] }]),
        );
        const table = { initial: names[0]!, states } as TransitionTable<string>;
        expect(edgesOf(toMermaid(table))).toEqual(tableEdges(table));
      }),
    );
  });
});

describe('historyToMermaid()', () => {
  it('labels the edges a run took with how often, forced and illegal moves apart, and notes where it ended', () => {
    const run = scriptedMachine();
    run.play([
      ['WaitingForUserInput', 'start', 1],
      ['SendingToLLM', 'ask', 1],
      ['ProcessingLLMResponse', 'reply', 1],
      ['EndOfTurn', 'done', 1],
      ['WaitingForUserInput', 'next', 1],
      ['SendingToLLM', 'ask', 1],
      ['Cancelled', 'user stopped it', 1, { forced: true }],
      ['WaitingForUserInput', 'next', 1],
      ['SendingToLLM', 'ask', 1],
      ['Error', 'failed', 1, { forced: true }],
    ]);
    const records = run.machine.history();
    const illegal = { ...records[9]!, seq: 11, from: 'Error' as const, to: 'Ready' as const, forced: false };
    const lines = historyToMermaid([...records, illegal]).split('\n');
    expect(lines).toContain('    Ready --> WaitingForUserInput : 1×');
    expect(lines).toContain('    WaitingForUserInput --> SendingToLLM : 3×');
    expect(lines).toContain('    SendingToLLM --> Error : 1× forced');
    expect(lines).toContain('    SendingToLLM --> Cancelled : 1× forced');
    expect(lines).toContain('    Error --> Ready : 1× illegal');
    expect(lines).toContain('    RunningTool --> Error'); // in the table, not taken
    expect(lines.at(-1)).toBe('    note right of Ready : ended here (seq 11)');
    expect(lines.filter((l) => l.includes('-->'))).toHaveLength(1 + 26 + 2);
  });

  it('counts a move taken both ways, some forced', () => {
    const records = [
      { seq: 1, from: 'Ready', to: 'WaitingForUserInput', description: '', at: 1, durationMs: 0, forced: false },
      { seq: 2, from: 'WaitingForUserInput', to: 'Ready', description: '', at: 2, durationMs: 1, forced: true },
      { seq: 3, from: 'Ready', to: 'WaitingForUserInput', description: '', at: 3, durationMs: 1, forced: true },
    ];
    expect(historyToMermaid(records).split('\n')).toContain('    Ready --> WaitingForUserInput : 2× (1 forced)');
  });

  it('draws over the table in the meta line', () => {
    const table = extendTable(DEFAULT_TABLE, {
      states: [{ name: 'Compacting', description: 'c', next: ['SendingToLLM'] }],
      edges: [['WaitingForUserInput', 'Compacting']],
    });
    const machine = new StateMachine({ table, logger: false, clock: () => T0 });
    machine.transition('WaitingForUserInput', 'start');
    machine.transition('Compacting', 'compact');
    const meta: HistoryEntry = {
      kind: 'meta',
      line: 1,
      table,
      meta: { type: 'meta', version: '0.1.0', runId: 'r', startedAt: T0, table: toHistoryTableInfo(table) },
    };
    const lines = historyToMermaid([meta, ...machine.history()]).split('\n');
    expect(lines).toContain('    WaitingForUserInput --> Compacting : 1×');
    expect(lines).toContain('    Compacting --> SendingToLLM');
  });
});

describe('historyToGantt()', () => {
  it('draws one lane per state in table order, one bar per visit, error visits critical, a milestone at the end', () => {
    const run = scriptedMachine();
    run.play([
      ['WaitingForUserInput', 'start', 5],
      ['SendingToLLM', 'user: hello; go #1', 1000],
      ['Error', 'LLM failed', 3000],
      ['WaitingForUserInput', 'recovered', 10],
    ]);
    const meta: HistoryEntry = {
      kind: 'meta',
      line: 1,
      table: DEFAULT_TABLE,
      meta: {
        type: 'meta',
        version: '0.1.0',
        runId: 'task-7',
        startedAt: T0,
        table: toHistoryTableInfo(DEFAULT_TABLE),
      },
    };
    expect(historyToGantt([meta, ...run.machine.history()])).toBe(
      [
        '---',
        'displayMode: compact',
        '---',
        'gantt',
        '    title Run task-7',
        '    dateFormat x',
        '    axisFormat %H:%M:%S',
        '    section Ready',
        `    start :${T0}, ${T0 + 5}`,
        '    section WaitingForUserInput',
        `    user hello go 1 :${T0 + 5}, ${T0 + 1005}`,
        `    ended in WaitingForUserInput :milestone, ${T0 + 4015}, ${T0 + 4015}`,
        '    section SendingToLLM',
        `    LLM failed :${T0 + 1005}, ${T0 + 4005}`,
        '    section Error',
        `    recovered :crit, ${T0 + 4005}, ${T0 + 4015}`,
      ].join('\n'),
    );
  });

  it('labels a bar with its seq when the move has no description, and takes a title', () => {
    const records = [
      { seq: 1, from: 'Ready', to: 'WaitingForUserInput', description: '', at: 10, durationMs: 10, forced: false },
    ];
    const text = historyToGantt(records, { title: 'night: batch' });
    expect(text).toContain('    title night batch');
    expect(text).toContain('    seq 1 :0, 10');
  });
});
