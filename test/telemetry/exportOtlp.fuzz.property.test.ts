import fc from 'fast-check';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { main } from '../../lib/cli/main';
import { HistoryFileError } from '../../lib/history/HistoryFileError';
import { loadHistory } from '../../lib/history/loadHistory';
import { InvalidArgumentError } from '../../lib/machine/InvalidArgumentError';
import { historyToOtlp } from '../../lib/telemetry/historyToOtlp';
import type { OtlpTraceExport } from '../../lib/telemetry/OtlpJson';
import { otlpShapeProblems } from '../helpers/otlpShape';

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-otlp-fuzz-'));
});
afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

const T = 1_700_000_000_000;
/** Numbers of every size a file may hold: real times, absurd ones, overflows once added. */
const number = fc.oneof(
  fc.constantFrom(T, T + 1, 0, -1, 1e308, -1e308, 1.7976931348623157e308, 2 ** 64, 18_446_744_073_709.56, 5e-324, 0.5),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer({ min: T - 1000, max: T + 1_000_000 }),
);
const state = fc.constantFrom(
  'Ready',
  'WaitingForUserInput',
  'SendingToLLM',
  'ProcessingLLMResponse',
  'RunningTool',
  'SendingToolResults',
  'EndOfTurn',
  'Error',
  'BudgetExceeded',
  'Custom\u001b[31m',
);
const toolResult = fc.record(
  { name: fc.string({ maxLength: 4 }), ms: number, startedAt: number, isError: fc.boolean(), note: fc.string() },
  { requiredKeys: [] },
);
const data = fc.oneof(
  fc.constant(undefined),
  fc.jsonValue({ maxDepth: 2 }),
  fc.record(
    {
      // Huge counts: many results in one line.
      results: fc.oneof(
        fc.array(toolResult, { maxLength: 5 }),
        fc.integer({ min: 0, max: 3000 }).map((n) => Array.from({ length: n }, () => ({ ms: 1 }))),
      ),
      failures: fc.array(fc.record({ attempt: number, error: fc.string(), delayMs: number }), { maxLength: 3 }),
      usage: fc.record({ costUsd: number, inputTokens: number, outputTokens: number, llmCalls: number }),
      attempt: number,
      model: fc.string(),
      outcome: fc.constantFrom('end_of_turn', 'error', 'budget_exceeded'),
      turn: number,
    },
    { requiredKeys: [] },
  ),
);
const record = fc.record({
  seq: fc.integer({ min: 1, max: 1e6 }),
  from: state,
  to: state,
  description: fc.string(),
  at: number,
  durationMs: number,
  forced: fc.boolean(),
  data,
});
const line = fc.oneof(
  { weight: 6, arbitrary: record.map((r) => JSON.stringify(r)) },
  fc
    .record({ from: state, to: state, at: number, seq: fc.nat(), description: fc.string(), allowed: fc.constant([]) })
    .map((r) => JSON.stringify({ type: 'rejected', ...r })),
  fc.record({ from: state, at: number, seq: fc.nat() }).map((r) => JSON.stringify({ type: 'reset', ...r })),
  fc
    .record({ turn: fc.integer({ min: 1, max: 9 }), startedAt: number, endedAt: number, seq: fc.nat() })
    .map((r) => JSON.stringify({ type: 'tool', call: { id: 'c', name: 'n' }, status: 'ok', ...r })),
  fc
    .record({ turn: fc.integer({ min: 1, max: 9 }), startedAt: number, endedAt: number, seq: fc.nat() })
    .map((r) => JSON.stringify({ type: 'llm', operation: 'sendUserMessage', attempt: 1, ...r })),
);

describe('OTLP export under fuzzing', () => {
  it('random lines of every kind, huge counts and absurd numbers: valid OTLP with warnings naming lines, or exit 2 naming the line', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(line, { maxLength: 12 }), async (lines) => {
        const file = path.join(dir, `f${n++}.jsonl`);
        fs.writeFileSync(file, lines.join('\n') + '\n');
        let stdout = '';
        let stderr = '';
        const code = await main(['export', 'otlp', file], {
          stdout: (t) => void (stdout += t),
          stderr: (t) => void (stderr += t),
        });
        const messages = stderr.split('\n').filter(Boolean);
        if (code === 0) {
          const otlp = JSON.parse(stdout) as OtlpTraceExport;
          expect(otlpShapeProblems(otlp)).toEqual([]);
          for (const m of messages) expect(m.startsWith(`agent-sm: warning: ${file}:`)).toBe(true);
        } else {
          expect(code).toBe(2);
          expect(messages.at(-1)).toMatch(new RegExp(`^agent-sm: error: ${file.replace(/[.]/g, '\\.')}:\\d+: `));
        }
        // The library function over the same lines: the same verdict, never another kind of error.
        let loaded;
        try {
          loaded = await loadHistory(file);
        } catch (error) {
          expect(error).toBeInstanceOf(HistoryFileError);
          expect(code).toBe(2);
          return;
        }
        try {
          const otlp = historyToOtlp(loaded.entries, { onWarning: () => undefined });
          expect(otlpShapeProblems(otlp)).toEqual([]);
          expect(code).toBe(0);
        } catch (error) {
          expect(error).toBeInstanceOf(InvalidArgumentError);
          expect((error as Error).message).toMatch(/line \d+: at/);
          expect(code).toBe(2);
        }
      }),
      { numRuns: 200 },
    );
  }, 120_000);
});
