import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { formatBatchReport, LLMCallError, type BatchReport } from '../../lib/index';
import { formatHistory } from '../../lib/history/formatHistory';
import { formatSummary } from '../../lib/history/formatSummary';
import { JsonlHistorySink } from '../../lib/history/JsonlHistorySink';
import { loadHistory } from '../../lib/history/loadHistory';
import { summarizeHistory } from '../../lib/history/summarizeHistory';
import { historyToGantt, historyToMermaid, toMermaid } from '../../lib/history/toMermaid';
import { escapeControl } from '../../lib/internal/escapeControl';
import { extendTable } from '../../lib/machine/extendTable';
import { DEFAULT_TABLE } from '../../lib/machine/transitions';
import { createTable } from '../../lib/machine/createTable';
import { checkTable } from '../../lib/machine/checkTable';
import { InvalidTableError } from '../../lib/machine/InvalidTableError';
import { StateMachine } from '../../lib/machine/StateMachine';
import type { TransitionRecord } from '../../lib/machine/TransitionRecord';
import { getDefaultLogger } from '../../lib/machine/defaultLogger';

// eslint-disable-next-line no-control-regex -- it is the control characters this test looks for
const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;
const HOSTILE = 'boom\u001b[2J\u001b]0;pwned\u0007\r\nOK: the last turn ended in EndOfTurn.\u009b31m';

const record = (seq: number, over: Partial<TransitionRecord<string>> = {}): TransitionRecord<string> => ({
  seq,
  from: 'Ready',
  to: 'WaitingForUserInput',
  description: 'start',
  at: Date.UTC(2025, 0, 1) + seq,
  durationMs: 1,
  forced: false,
  ...over,
});

describe('escapeControl()', () => {
  it('shows C0, DEL, C1, ESC, CR and LF escaped as JSON does, and leaves other text alone', () => {
    expect(escapeControl('a\nb\r\t\u001b[1m\u007f\u0085é→')).toBe('a\\nb\\r\\t\\u001b[1m\\u007f\\u0085é→');
    expect(escapeControl('plain')).toBe('plain');
  });
});

describe('human-readable output never carries a control character from the run', () => {
  it('formatHistory() escapes descriptions, state names and data', () => {
    const text = formatHistory([
      record(1, { description: HOSTILE, from: 'A\u001b[2J', to: 'B\nC', data: { note: 'x\u0085y' } }),
    ]);
    expect(text).not.toMatch(CONTROL);
    expect(text.split('\n')).toHaveLength(2);
    expect(text).toContain('boom\\u001b[2J');
  });

  it('formatHistory() shows an odd time or a numeric description instead of throwing', () => {
    const text = formatHistory([record(1, { at: NaN, description: 42 as never }), record(2, { at: 1.7e18 })]);
    expect(text).toContain('NaN (not a time)');
    expect(text).toContain('1700000000000000000 (not a time)');
    expect(text).toContain('42');
  });

  it('formatSummary() cannot be given a forged report line, and counts states named like Object members', () => {
    const machine = new StateMachine({ logger: false, clock: () => Date.UTC(2025, 0, 1) });
    machine.transition('WaitingForUserInput', HOSTILE);
    machine.transition('SendingToLLM', HOSTILE);
    machine.forceTransition('Error', HOSTILE);
    const text = formatSummary(summarizeHistory(machine.history()), { file: 'run\u001b[2J.jsonl' });
    expect(text).not.toMatch(CONTROL);
    expect(text.split('\n').filter((l) => l.startsWith('OK:'))).toEqual([]);
    const table = extendTable(DEFAULT_TABLE as never, {
      states: [
        { name: 'constructor', description: 'ends a turn', next: ['Ready'], isTerminal: true },
        { name: 'toString', description: 'ends a turn', next: ['Ready'], isTerminal: true },
      ],
      edges: [
        ['SendingToLLM', 'constructor'],
        ['SendingToLLM', 'toString'],
      ],
    });
    const machine2 = new StateMachine({ logger: false, table, clock: () => Date.UTC(2025, 0, 1) });
    for (const end of ['constructor', 'toString', 'constructor'] as const) {
      machine2.transition('WaitingForUserInput');
      machine2.transition('SendingToLLM');
      machine2.transition(end);
      machine2.transition('Ready');
    }
    const summary = summarizeHistory(machine2.history(), { table: table as never });
    expect(summary.turns.outcomes).toEqual({ constructor: 2, toString: 1 });
    expect(formatSummary(summary)).toContain('2 constructor, 1 toString');
  });

  it('formatBatchReport() escapes run ids, messages and paths', () => {
    const report: BatchReport = {
      runs: [
        {
          id: `task${HOSTILE}`,
          outcome: 'error',
          usage: { inputTokens: 0, outputTokens: 0, costUsd: 0, toolCalls: 0, llmCalls: 1, wallMs: 0 },
          durationMs: 5,
          transitions: 2,
          historyFile: '/tmp/\u001b[2J.jsonl',
          error: new LLMCallError('sendUserMessage', [], new Error(HOSTILE)),
        },
      ],
      totals: {
        inputTokens: 0,
        outputTokens: 0,
        costUsd: 0,
        toolCalls: 0,
        llmCalls: 1,
        wallMs: 0,
        outcomes: { end_of_turn: 0, error: 1, cancelled: 0, budget_exceeded: 0, skipped: 0 },
      },
      limits: {},
      durationMs: 5,
      concurrency: 1,
      stopped: { reason: 'aborted', message: HOSTILE },
    } as unknown as BatchReport;
    const text = formatBatchReport(report);
    expect(text).not.toMatch(CONTROL);
  });

  it('the default logger formats a forged description as one escaped line', () => {
    const info = getDefaultLogger().format.transform({
      level: 'warn',
      message: `forced transition Ready → Error: ${HOSTILE}`,
      [Symbol.for('level')]: 'warn',
      data: { note: HOSTILE },
    } as never) as Record<symbol, string>;
    const text = info[Symbol.for('message')]!;
    expect(text).toContain('boom\\u001b[2J');
    expect(text).not.toMatch(CONTROL);
    expect(text).not.toContain('\n');
  });
});

describe('Mermaid output', () => {
  it('historyToMermaid() quotes a state name holding `"` and a line break, so it adds no line', () => {
    const name = 'X"\n    Ready --> Pwned';
    const records = [record(1, { to: name, forced: true })];
    const text = historyToMermaid(records);
    expect(text).not.toContain('\n    Ready --> Pwned');
    expect(text).not.toMatch(CONTROL);
    expect(text).toMatch(/state "X#quot;\\n {4}Ready --> Pwned" as s1/);
    const gantt = historyToGantt([record(1, { description: 'a\nb\u001b:c', to: name })]);
    expect(gantt).not.toMatch(CONTROL);
    expect(gantt.split('\n').filter((l) => l.includes('Pwned'))).toHaveLength(2); // its section and its milestone
  });

  it('toMermaid() draws a table whose state names need quoting', () => {
    expect(toMermaid().split('\n')[0]).toBe('stateDiagram-v2');
  });
});

describe('createTable() and checkTable()', () => {
  it('createTable() refuses a state named __proto__', () => {
    expect(() => createTable([{ name: '__proto__', description: 'x', next: [] }] as never, '__proto__')).toThrow(
      InvalidTableError,
    );
    const states = JSON.parse(
      '{"__proto__": {"name": "__proto__", "description": "x", "next": ["__proto__"]}}',
    ) as never;
    expect(checkTable({ initial: '__proto__', states }).issues.map((i) => i.code)).toContain('reserved_name');
  });
});

describe('files with hostile strings', () => {
  it('a file written with hostile descriptions and a nanosecond clock reads and formats without throwing', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-esc-'));
    try {
      const file = path.join(dir, 'run.jsonl');
      const sink = JsonlHistorySink.open(file, { runId: HOSTILE, startedAt: 1 });
      let t = 1.7e18;
      const machine = new StateMachine({ logger: false, sink, clock: () => (t += 1e6) });
      machine.transition('WaitingForUserInput', HOSTILE);
      machine.forceTransition('Error', HOSTILE);
      sink.close();
      const loaded = await loadHistory(file);
      const text = formatSummary(summarizeHistory(loaded.entries), { file });
      expect(text).not.toMatch(CONTROL);
      expect(text).toContain('not a time');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
