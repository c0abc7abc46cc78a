// diffRunFiles on real runs (the diff batches' files): a run diffed with itself, or with a copy
// whose timestamps and durations all moved, is the same; a copy with one line changed
// diverges exactly at that line, every step before it alike.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { diffRunFiles } from '../../lib/history/diffRunFiles';
import { runDiffBatch } from '../helpers/diffBatch';

let lines: string[] = [];
let dir: string;
beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-diff-prop-'));
  await runDiffBatch(dir, 'base');
  // Task a: a tool call and two answers, with the meta line, ledger reservations and journal lines.
  lines = fs
    .readFileSync(path.join(dir, 'a.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l !== '');
}, 60_000);
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** The lines as a run to read, without a file. */
const run = (name: string, text: readonly string[]): { name: string; input: () => AsyncIterable<Uint8Array> } => ({
  name,
  input: async function* () {
    yield Buffer.from(`${text.join('\n')}\n`);
  },
});

/** Lines that are steps (compared): not the meta line, not a ledger reservation. */
const isStep = (line: string): boolean => {
  const value = JSON.parse(line) as { type?: string };
  return value.type !== 'meta' && value.type !== 'reserve';
};

/** Every timestamp and duration of a line moved by `by` (the fields a diff never compares). */
function shifted(line: string, by: number): string {
  return JSON.stringify(JSON.parse(line), (key, value: unknown) =>
    typeof value === 'number' && ['at', 'startedAt', 'endedAt', 'durationMs', 'wallMs', 'ms'].includes(key)
      ? value + by
      : value,
  );
}

/** The line with one thing changed that a diff compares. */
function changed(line: string, text: string): string {
  const value = JSON.parse(line) as Record<string, unknown>;
  // A move's description; a journal line's content (its free fields are kept as written).
  if (value['type'] === undefined) value['description'] = `${String(value['description'])}${text}`;
  else value['note'] = text;
  return JSON.stringify(value);
}

describe('diffRunFiles (property)', () => {
  it('a run diffed with itself, or with every time moved, is the same', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: -1_000_000, max: 1_000_000 }), async (by) => {
        const diff = await diffRunFiles(
          run('a', lines),
          run(
            'b',
            lines.map((l) => shifted(l, by)),
          ),
        );
        expect(diff.same).toBe(true);
        expect(diff.divergence).toBeUndefined();
        expect(diff.sameSteps).toBe(lines.filter(isStep).length);
        // Outcome, usage and money alike; only time may differ.
        expect({ ...diff.a.facts, durationMs: 0 }).toEqual({ ...diff.b.facts, durationMs: 0 });
      }),
      { numRuns: 40 },
    );
  });

  it('a copy with one line changed diverges exactly there', async () => {
    const steps = lines.map((l, i) => ({ l, i })).filter(({ l }) => isStep(l));
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: steps.length - 1 }),
        fc.string({ minLength: 1, maxLength: 20 }),
        async (k, text) => {
          const at = steps[k]!.i;
          const copy = lines.map((l, i) => (i === at ? changed(l, text) : l));
          const diff = await diffRunFiles(run('a', lines), run('b', copy));
          expect(diff.same).toBe(false);
          expect(diff.sameSteps).toBe(k);
          expect(diff.divergence?.a?.line).toBe(at + 1);
          expect(diff.divergence?.b?.line).toBe(at + 1);
          expect(diff.divergence?.fields.length).toBeGreaterThan(0);
          // The steps after it are alike: nothing else is named as the cause.
          expect(diff.divergence?.cause).toBeUndefined();
          const kinds: Record<string, string> = { move: 'move', llm: 'response', tool: 'tool_result' };
          expect(diff.divergence?.kind).toBe(kinds[(JSON.parse(lines[at]!) as { type?: string }).type ?? 'move']);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('a run cut short diverges where it ends: the other went on', async () => {
    const steps = lines.map((l, i) => ({ l, i })).filter(({ l }) => isStep(l));
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: steps.length - 1 }), async (k) => {
        const diff = await diffRunFiles(run('a', lines), run('b', lines.slice(0, steps[k]!.i)));
        expect(diff.divergence).toMatchObject({ kind: 'end', a: { line: steps[k]!.i + 1 }, b: undefined });
        expect(diff.sameSteps).toBe(k);
      }),
      { numRuns: 20 },
    );
  });
});
