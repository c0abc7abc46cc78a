import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { HistoryFileError } from '../../lib/history/HistoryFileError';
import { JsonlHistorySink } from '../../lib/history/JsonlHistorySink';
import { loadHistory } from '../../lib/history/loadHistory';
import type { TransitionRecord } from '../../lib/machine/TransitionRecord';
import type { StateName } from '../../states/StateName';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-limit-'));
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

const T0 = 1_700_000_000_000;
const record = (seq: number, data?: unknown, description = 'move'): TransitionRecord<StateName> => ({
  seq,
  from: seq === 1 ? 'Ready' : 'WaitingForUserInput',
  to: 'WaitingForUserInput',
  description,
  at: T0 + seq,
  durationMs: 1,
  forced: false,
  ...(data === undefined ? {} : { data }),
});

describe('the writer refuses what the readers would refuse', () => {
  it('a record over the limit is written with a placeholder naming what was dropped, and line_too_long is thrown', async () => {
    const file = path.join(dir, 'run.jsonl');
    const sink = JsonlHistorySink.open(file, { meta: false, maxLineBytes: 4096 });
    sink.write(record(1, { small: true }));
    let thrown: unknown;
    try {
      sink.write(record(2, { result: 'x'.repeat(10_000), outcome: 'error', usage: { costUsd: 0.5, llmCalls: 2 } }));
    } catch (error) {
      thrown = error;
    }
    sink.write(record(3));
    sink.close();
    expect(thrown).toBeInstanceOf(HistoryFileError);
    expect((thrown as HistoryFileError).code).toBe('line_too_long');
    expect((thrown as Error).message).toMatch(
      /record 2 .*too long to write: the record was 10,\d{3} bytes, over the 4,096-byte/,
    );
    const loaded = await loadHistory(file, { maxLineBytes: 4096 });
    expect(loaded.records.map((r) => r.seq)).toEqual([1, 2, 3]);
    // What readers count (the outcome, the usage) is kept; the bulk is not.
    expect(loaded.records[1]!.data).toEqual({
      outcome: 'error',
      usage: { costUsd: 0.5, llmCalls: 2 },
      dropped: expect.stringMatching(/^data dropped: the record was 10,\d{3} bytes/),
    });
  });

  it('a huge description is cut, marked, so the move still fits', async () => {
    const file = path.join(dir, 'run.jsonl');
    const sink = JsonlHistorySink.open(file, { meta: false, maxLineBytes: 8192 });
    expect(() => sink.write(record(1, undefined, 'é'.repeat(9000)))).toThrow(/description cut/);
    sink.close();
    const [r] = (await loadHistory(file, { maxLineBytes: 8192 })).records;
    expect(r!.description).toMatch(/^é{256}… \[8,744 more characters dropped\]$/);
  });

  it('a journal line over the limit keeps what readers count (turn, times, cost, call id) and says what was dropped', async () => {
    const file = path.join(dir, 'run.jsonl');
    const sink = JsonlHistorySink.open(file, { meta: false, maxLineBytes: 4096 });
    sink.write(record(1));
    expect(() =>
      sink.journal({
        type: 'llm',
        turn: 1,
        operation: 'sendUserMessage',
        attempt: 1,
        startedAt: T0,
        endedAt: T0 + 5,
        input: { message: 'y'.repeat(5000) },
        costUsd: 0.25,
      } as never),
    ).toThrow(/llm journal line after record 1 is too long to write/);
    expect(() =>
      sink.journal({
        type: 'tool',
        turn: 1,
        call: { id: 'c1', name: 'grep', input: { q: 'z'.repeat(5000) } },
        status: 'ok',
        startedAt: T0,
        endedAt: T0 + 5,
        result: { callId: 'c1', content: 'big' },
      } as never),
    ).toThrow(HistoryFileError);
    sink.close();
    const loaded = await loadHistory(file, { maxLineBytes: 4096 });
    expect(loaded.journal).toEqual([
      expect.objectContaining({
        type: 'llm',
        turn: 1,
        attempt: 1,
        costUsd: 0.25,
        dropped: expect.stringMatching(/^content dropped/),
      }),
      expect.objectContaining({
        type: 'tool',
        call: { id: 'c1', name: 'grep' },
        status: 'ok',
        dropped: expect.any(String),
      }),
    ]);
  });

  it('metadata too large for a meta line is refused at open, before the file exists', () => {
    const file = path.join(dir, 'run.jsonl');
    expect(() => JsonlHistorySink.open(file, { maxLineBytes: 2048, metadata: 'm'.repeat(3000) })).toThrow(
      /metadata.*fits in maxLineBytes/,
    );
    expect(fs.existsSync(file)).toBe(false);
    expect(() => JsonlHistorySink.open(file, { maxLineBytes: 12 })).toThrow(/maxLineBytes.*at least 1024/);
  });

  it('property: every line the writer accepts is read back with the same limit', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof(fc.string({ maxLength: 3000 }), fc.string({ unit: 'binary', maxLength: 1500 })), {
          minLength: 1,
          maxLength: 6,
        }),
        async (contents) => {
          const file = path.join(dir, `p-${Math.random()}.jsonl`);
          const sink = JsonlHistorySink.open(file, { maxLineBytes: 2048 });
          contents.forEach((c, i) => {
            try {
              sink.write(record(i + 1, { c }, c));
            } catch (error) {
              expect((error as HistoryFileError).code).toBe('line_too_long');
            }
          });
          sink.close();
          const loaded = await loadHistory(file, { maxLineBytes: 2048 });
          expect(loaded.records).toHaveLength(contents.length);
        },
      ),
      { numRuns: 40 },
    );
  }, 60_000);

  it('with the default limit, a 70 MB data string does not make an unreadable file', async () => {
    const file = path.join(dir, 'run.jsonl');
    const sink = JsonlHistorySink.open(file, { meta: false });
    expect(() => sink.write(record(1, 'd'.repeat(70 * 1024 * 1024)))).toThrow(/over the 67,108,864-byte line limit/);
    sink.close();
    const loaded = await loadHistory(file);
    expect(loaded.records[0]!.data).toEqual({ dropped: expect.stringMatching(/^data dropped/) });
  });
});
