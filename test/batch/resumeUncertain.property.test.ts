// A run cut off again and again, each attempt leaving reservations with no answer after them
// (requests the provider may have billed), then resumed: what the resume counts and what the
// folder's readers report is every attempt's priced calls once and every unanswered reservation
// of every attempt at its worst case (DESIGN, "Write ahead of spending"). Each attempt's file is
// written as the adapter writes a resumed run: the responses of the best journal served again
// (`fromJournal`, no reservation), the earlier spend the resume carried charged once it goes
// live, then its own reservations and answers. The spend it is resumed with is the figure the
// resume read the attempt before: the run goes on from what the library said, as it does.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { writeBatchManifest } from '../../lib/batch/keeping/batchManifest';
import { folderEarlierRuns } from '../../lib/batch/resume/EarlierRuns';
import { readBatchFolder } from '../../lib/batch/reading/readBatchFolder';
import {
  releasedOverAttempts,
  spendOverAttempts,
  uncertainOverAttempts,
  unpricedOverAttempts,
} from '../../lib/history/spendOverAttempts';

/** One attempt: its calls answered live (their price), its reservations left open (their worst case), or cut while it served. */
interface Attempt {
  answered: number[];
  open: number[];
  /** Cut after serving this many of the earlier responses, before going live (then `answered` and `open` are ignored). */
  cutWhileServing: number | null;
}

/** Amounts in tenths of a cent: sums stay exact enough to compare at 1e-9. */
const usd = fc.integer({ min: 1, max: 50 }).map((n) => n / 1000);
const attempt: fc.Arbitrary<Attempt> = fc.record({
  answered: fc.array(usd, { maxLength: 3 }),
  open: fc.array(usd, { maxLength: 3 }),
  cutWhileServing: fc.option(fc.nat({ max: 4 }), { freq: 4 }),
});

const T0 = 1_750_000_000_000;

/** The lines of one attempt's file, as the adapter writes them. */
class AttemptFile {
  readonly lines: string[] = [];
  #seq = 0;
  #at = T0;

  record(to: string, usage?: { costUsd: number; llmCalls: number }): void {
    this.#seq += 1;
    this.#at += 1;
    const from = this.#seq === 1 ? 'Ready' : 'SendingToolResults';
    const data =
      usage === undefined ? undefined : { usage: { ...usage, inputTokens: 0, outputTokens: 0, toolCalls: 0 } };
    this.lines.push(
      JSON.stringify({
        seq: this.#seq,
        from,
        to,
        description: 'move',
        at: this.#at,
        durationMs: 1,
        forced: false,
        data,
      }),
    );
  }

  journal(line: Record<string, unknown>): void {
    this.lines.push(JSON.stringify({ seq: this.#seq, turn: 1, ...line }));
  }

  llm(n: number, costUsd: number, fromJournal: boolean): void {
    this.journal({
      type: 'llm',
      operation: n === 0 ? 'sendUserMessage' : 'sendToolResults',
      attempt: 1,
      startedAt: this.#at,
      endedAt: this.#at,
      input: n === 0 ? { kind: 'user_message', message: 'go' } : { kind: 'tool_results', results: [], messages: [] },
      response: { text: `response ${n}`, usage: { costUsd } },
      costUsd,
      ...(fromJournal ? { fromJournal: true } : {}),
    });
  }

  reserve(turn: number, maxCostUsd: number, operation = 'sendToolResults'): void {
    this.journal({ type: 'reserve', turn, operation, attempt: 1, at: this.#at, maxCostUsd });
  }
}

/**
 * Writes attempt `a` of the run to `file`: `prices` are the responses answered before it (each
 * served again), `carried` what the resume said the run had spent. Returns the prices after it.
 */
function writeAttempt(file: string, a: Attempt, prices: readonly number[], carried: number): number[] {
  const out = new AttemptFile();
  out.record('WaitingForUserInput');
  let served = 0;
  const serving = a.cutWhileServing === null ? prices.length : Math.min(a.cutWhileServing, prices.length);
  for (const [n, price] of prices.slice(0, serving).entries()) {
    out.llm(n, price, true);
    served += price;
    out.record('ProcessingLLMResponse', { costUsd: served, llmCalls: n + 1 });
  }
  if (a.cutWhileServing !== null) {
    fs.writeFileSync(file, `${out.lines.join('\n')}\n`);
    return [...prices];
  }
  // Live: the rest of the earlier spend is charged once, then each call is reserved, answered, charged.
  const after = [...prices];
  let spent = carried;
  for (const price of a.answered) {
    out.reserve(1, price + 0.001, after.length === 0 ? 'sendUserMessage' : 'sendToolResults');
    out.llm(after.length, price, false);
    after.push(price);
    spent += price;
    out.record('ProcessingLLMResponse', { costUsd: spent, llmCalls: after.length });
  }
  // Killed with these reservations written, and no answer to them.
  for (const [i, worst] of a.open.entries()) out.reserve(2 + i, worst);
  fs.writeFileSync(file, `${out.lines.join('\n')}\n`);
  return after;
}

describe('a run cut off in N attempts, each leaving k reservations without an answer', () => {
  let dir: string;
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-uncertain-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('the resume and the folder count every unanswered reservation of every attempt at its worst case, and every answered call once', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(attempt, { minLength: 2, maxLength: 12 }), async (attempts) => {
        fs.rmSync(dir, { recursive: true, force: true });
        fs.mkdirSync(dir);
        writeBatchManifest(dir, { startedAt: T0, concurrency: 1, limits: {}, tasks: [{ id: 't', file: 't.jsonl' }] });
        const file = path.join(dir, 't.jsonl');
        let prices: number[] = [];
        let carried = 0;
        let expected = 0;
        for (const [i, a] of attempts.entries()) {
          if (i > 0) await (await folderEarlierRuns(dir, ['t'], false)).setAside(0);
          prices = writeAttempt(file, a, prices, carried);
          if (a.cutWhileServing === null) expected += [...a.answered, ...a.open].reduce((x, y) => x + y, 0);
          // What the next attempt is resumed with: its shared budget and its own start from it.
          const earlier = await folderEarlierRuns(dir, ['t'], false);
          const state = earlier.states[0]!;
          expect(state.kind).toBe('interrupted');
          carried = state.kind === 'interrupted' ? state.usage.costUsd : NaN;
          expect(carried).toBeCloseTo(expected, 9);
          // It continues from every response answered so far.
          expect((await earlier.journal(0)).filter((l) => l.type === 'llm')).toHaveLength(prices.length);
        }
        // The folder's readers (`agent-sm inspect`, the stop reason) agree with the resume.
        const folder = await readBatchFolder(dir, { onWarning: () => undefined });
        expect(folder.runs[0]!.interrupted).toHaveLength(attempts.length - 1);
        expect(folder.runs[0]!.costUsd).toBeCloseTo(expected, 9);
        expect(folder.totals.costUsd).toBeCloseTo(expected, 9);
      }),
      { numRuns: 60, seed: 50_7 },
    );
  });

  it('three attempts, each cut with a call in flight: the resume counts all three holds, not the last one alone', async () => {
    writeBatchManifest(dir, { startedAt: T0, concurrency: 1, limits: {}, tasks: [{ id: 't', file: 't.jsonl' }] });
    const file = path.join(dir, 't.jsonl');
    let prices: number[] = [];
    let carried = 0;
    for (const [i, a] of [
      { answered: [0.01], open: [0.02], cutWhileServing: null },
      { answered: [0.01], open: [0.02], cutWhileServing: null },
      { answered: [], open: [0.02], cutWhileServing: null },
    ].entries()) {
      if (i > 0) await (await folderEarlierRuns(dir, ['t'], false)).setAside(0);
      prices = writeAttempt(file, a, prices, carried);
      const state = (await folderEarlierRuns(dir, ['t'], false)).states[0]!;
      carried = state.kind === 'interrupted' ? state.usage.costUsd : NaN;
    }
    // $0.02 answered, $0.06 held by three requests that may have been billed.
    expect(carried).toBeCloseTo(0.08, 10);
  });

  const NONE_UNCERTAIN = {
    recordedUncertainUsd: 0,
    liveUncertainUsd: 0,
    recordedReleasedUsd: 0,
    liveReleasedUsd: 0,
    recordedUnpricedCalls: 0,
    liveUnpricedCalls: 0,
    openUnpricedCalls: 0,
    uncertainWhy: [],
    unpricedWhy: [],
  };

  it('spendOverAttempts: an answered call counts once, a served one not again, an open reservation at its worst case', () => {
    const attempt1 = { recordedUsd: 0.01, liveUsd: 0.01, heldUsd: 0.02, ...NONE_UNCERTAIN, ledger: true };
    // Resumed with $0.03: served the $0.01 again (not in liveUsd), made a $0.01 call, left $0.02 open.
    const attempt2 = { recordedUsd: 0.04, liveUsd: 0.01, heldUsd: 0.02, ...NONE_UNCERTAIN, ledger: true };
    expect(spendOverAttempts([attempt1, attempt2])).toBeCloseTo(0.06, 10);
    // An attempt without a ledger counts what its records carry.
    expect(
      spendOverAttempts([attempt1, { recordedUsd: 0.05, liveUsd: 0, heldUsd: 0, ...NONE_UNCERTAIN, ledger: false }]),
    ).toBe(0.05);
    expect(spendOverAttempts([])).toBe(0);
  });

  it('uncertainOverAttempts: every open reservation of every attempt is uncertain, answered calls are not', () => {
    const attempt1 = { recordedUsd: 0.01, liveUsd: 0.01, heldUsd: 0.02, ...NONE_UNCERTAIN, ledger: true };
    // Resumed with $0.02 uncertain: a call charged at its hold ($0.01), $0.02 left open again.
    const attempt2 = {
      recordedUsd: 0.04,
      liveUsd: 0.01,
      heldUsd: 0.02,
      ...NONE_UNCERTAIN,
      recordedUncertainUsd: 0.02,
      liveUncertainUsd: 0.01,
      ledger: true,
    };
    expect(uncertainOverAttempts([attempt1])).toBeCloseTo(0.02, 10);
    expect(uncertainOverAttempts([attempt1, attempt2])).toBeCloseTo(0.05, 10);
    expect(uncertainOverAttempts([])).toBe(0);
  });

  it('unpricedOverAttempts: each attempt adds its own calls of unknown cost and its open reservations without an amount, once', () => {
    // One answered call of unknown cost, one reserved with no amount and no answer.
    const attempt1 = {
      ...NONE_UNCERTAIN,
      recordedUsd: 0,
      liveUsd: 0,
      heldUsd: 0,
      liveUnpricedCalls: 1,
      recordedUnpricedCalls: 1,
      openUnpricedCalls: 1,
      ledger: true,
    };
    // Resumed with those two (its records say 2), it made one more and was cut before a record counted it.
    const attempt2 = { ...attempt1, recordedUnpricedCalls: 2, liveUnpricedCalls: 1, openUnpricedCalls: 0 };
    expect(unpricedOverAttempts([attempt1])).toBe(2);
    expect(unpricedOverAttempts([attempt1, attempt2])).toBe(3);
    // Records that say more (a call served, counted again) bound it from below; without a ledger they are all there is.
    expect(unpricedOverAttempts([attempt1, { ...attempt2, recordedUnpricedCalls: 5 }])).toBe(5);
    expect(unpricedOverAttempts([{ ...attempt2, ledger: false }])).toBe(2);
    expect(unpricedOverAttempts([])).toBe(0);
  });

  it('releasedOverAttempts: each attempt adds the holds it let go itself, once; its records bound it from below', () => {
    const attempt1 = {
      ...NONE_UNCERTAIN,
      recordedUsd: 0,
      liveUsd: 0,
      heldUsd: 0,
      liveReleasedUsd: 0.01,
      recordedReleasedUsd: 0.01,
      ledger: true,
    };
    // Resumed with that $0.01 (its records say so), it let $0.01 more go and was cut before a record counted it.
    const attempt2 = { ...attempt1, recordedReleasedUsd: 0.01, liveReleasedUsd: 0.01 };
    expect(releasedOverAttempts([attempt1])).toBeCloseTo(0.01, 10);
    expect(releasedOverAttempts([attempt1, attempt2])).toBeCloseTo(0.02, 10);
    // Records that say more bound it from below; without a ledger they are all there is.
    expect(releasedOverAttempts([attempt1, { ...attempt2, recordedReleasedUsd: 0.05 }])).toBe(0.05);
    expect(releasedOverAttempts([{ ...attempt2, ledger: false }])).toBe(0.01);
    expect(releasedOverAttempts([])).toBe(0);
  });

  it('a run killed after its attempt was set aside, before the next wrote its file, is still cut off, with that spend', async () => {
    writeBatchManifest(dir, { startedAt: T0, concurrency: 1, limits: {}, tasks: [{ id: 't', file: 't.jsonl' }] });
    const file = path.join(dir, 't.jsonl');
    writeAttempt(file, { answered: [0.01], open: [0.02], cutWhileServing: null }, [], 0);
    await (await folderEarlierRuns(dir, ['t'], false)).setAside(0);
    const earlier = await folderEarlierRuns(dir, ['t'], false);
    expect(earlier.states[0]).toMatchObject({ kind: 'interrupted', file });
    expect(earlier.states[0]!.kind === 'interrupted' && earlier.states[0]!.usage.costUsd).toBeCloseTo(0.03, 10);
    expect((await earlier.journal(0)).filter((l) => l.type === 'llm')).toHaveLength(1);
    await earlier.setAside(0);
    expect(fs.readdirSync(dir).sort()).toEqual(['batch.json', 't.jsonl.interrupted']);
  });
});
