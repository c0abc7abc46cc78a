import fc from 'fast-check';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { formatBatchReport, type BatchReport } from '../../lib/index';
import { formatHistory } from '../../lib/history/formatHistory';
import { formatSummary } from '../../lib/history/formatSummary';
import type { HistoryEntry } from '../../lib/history/HistoryEntry';
import { HistoryFileError } from '../../lib/history/HistoryFileError';
import { loadHistory } from '../../lib/history/loadHistory';
import { summarizeHistory } from '../../lib/history/summarizeHistory';
import { historyToGantt, historyToMermaid } from '../../lib/history/toMermaid';
import { validateHistory } from '../../lib/history/validateHistory';
import type { TransitionRecord } from '../../lib/machine/TransitionRecord';

// Control characters other than the line breaks a formatter puts between its own lines.
// eslint-disable-next-line no-control-regex -- it is the control characters this test looks for
const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-fuzz-'));
});
afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

const hostileChar = fc.constantFrom(
  '\n',
  '\r',
  '\u001b',
  '\u0007',
  '\u0000',
  '\u007f',
  '\u0085',
  '\u009b',
  '"',
  '\\',
  '#',
  ':',
  '%',
  '\u2028',
  '\u202e',
  'é',
  '→',
  ' ',
);
const hostileString = fc
  .array(fc.oneof(hostileChar, fc.string({ maxLength: 3 })), { maxLength: 12 })
  .map((parts) => parts.join(''));
const stateName = fc.oneof(
  fc.constantFrom(
    'Ready',
    'WaitingForUserInput',
    'SendingToLLM',
    'EndOfTurn',
    'Error',
    'constructor',
    'toString',
    '__proto__',
  ),
  hostileString.filter((s) => s !== ''),
);
const number = fc.oneof(fc.double(), fc.integer(), fc.constantFrom(1.7e18, -1, 0, Date.UTC(2025, 0, 1)));
const record = fc.record({
  seq: fc.integer({ min: 1, max: 1e6 }),
  from: stateName,
  to: stateName,
  description: hostileString,
  at: number,
  durationMs: number,
  forced: fc.boolean(),
  data: fc.option(fc.jsonValue(), { nil: undefined }),
});

/** Reads `bytes` as a history file: it must read, or throw a HistoryFileError, nothing else. */
async function readBytes(bytes: Uint8Array, salvage: boolean): Promise<HistoryEntry[] | undefined> {
  const file = path.join(dir, 'fuzz.jsonl');
  fs.writeFileSync(file, bytes);
  try {
    return [...(await loadHistory(file, { salvage, maxLineBytes: 4096 })).entries];
  } catch (error) {
    if (error instanceof HistoryFileError) return undefined;
    throw error;
  }
}

function expectClean(text: string): void {
  expect(typeof text).toBe('string');
  expect(text).not.toMatch(CONTROL);
}

/** Every formatter over what was read: no throw, no control character in the output. */
function formatAll(entries: readonly HistoryEntry[]): void {
  const records = entries.flatMap((e) => (e.kind === 'record' ? [e.record] : []));
  expectClean(formatHistory(records));
  expectClean(formatSummary(summarizeHistory(entries), { file: 'f\u001b.jsonl' }));
  validateHistory(entries);
  expectClean(historyToMermaid(entries));
  expectClean(historyToGantt(entries));
}

describe('the history reader and formatters under fuzzing', () => {
  it('loadHistory() of random bytes reads or throws HistoryFileError, with and without salvage', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 600 }), fc.boolean(), async (bytes, salvage) => {
        const entries = await readBytes(bytes, salvage);
        if (entries !== undefined) formatAll(entries);
      }),
      { numRuns: 150 },
    );
  });

  it('loadHistory() of random JSON lines reads or throws HistoryFileError', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.oneof(
            fc.jsonValue().map((v) => JSON.stringify(v) ?? 'null'),
            record.map((r) => JSON.stringify(r)),
          ),
          { maxLength: 10 },
        ),
        fc.boolean(),
        async (lines, salvage) => {
          const entries = await readBytes(Buffer.from(lines.join('\n')), salvage);
          if (entries !== undefined) formatAll(entries);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('valid-looking records with hostile strings format with no control character, from a file or in memory', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(record, { minLength: 1, maxLength: 8 }), async (records) => {
        const inMemory = records as TransitionRecord<string>[];
        expectClean(formatHistory(inMemory));
        expectClean(formatSummary(summarizeHistory(inMemory)));
        expectClean(historyToMermaid(inMemory));
        expectClean(historyToGantt(inMemory));
        const entries = await readBytes(Buffer.from(records.map((r) => JSON.stringify(r)).join('\n') + '\n'), true);
        if (entries !== undefined) formatAll(entries);
      }),
      { numRuns: 150 },
    );
  });

  it('formatBatchReport() with hostile ids and messages has no control character', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(hostileString, hostileString), { minLength: 1, maxLength: 5 }), (runs) => {
        const usage = { inputTokens: 0, outputTokens: 0, costUsd: 0, toolCalls: 0, llmCalls: 0, wallMs: 0 };
        const report = {
          runs: runs.map(([id, message]) => ({
            id,
            outcome: 'error',
            usage,
            durationMs: 1,
            transitions: 1,
            historyFile: `/tmp/${id}.jsonl`,
            error: new Error(message),
          })),
          totals: {
            ...usage,
            outcomes: { end_of_turn: 0, error: runs.length, cancelled: 0, budget_exceeded: 0, skipped: 0 },
          },
          limits: {},
          concurrency: 1,
          durationMs: 1,
        } as unknown as BatchReport;
        expectClean(formatBatchReport(report));
      }),
      { numRuns: 100 },
    );
  });
});
