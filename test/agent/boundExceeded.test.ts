import { boundExceeded, boundExceededMessage } from '../../lib/agent/boundExceeded';
import { Budget, StepMirror, type Pricing } from '../../lib/index';
import { drive } from '../helpers/drive';

// $1 per million input tokens, $4 per million output tokens.
const pricing: Pricing = (u) => (u.inputTokens ?? 0) * 1e-6 + (u.outputTokens ?? 0) * 4e-6;
const bound = { inputTokens: 1000, maxOutputTokens: 100, model: 'm' };
// A server that ignores max tokens: 1,000 output tokens whatever the request asked.
const ignoring = { text: 'ok', model: 'm', usage: { inputTokens: 1000, outputTokens: 1000 } };

describe('a response past its bound', () => {
  it('is a fact with the overshoot in tokens and dollars; a response within its bound is none', () => {
    expect(boundExceeded(bound, { outputTokens: 100 }, 0.0014, 0.0014)).toBeUndefined();
    expect(boundExceeded(undefined, { outputTokens: 1e6 }, 5, 0.0014)).toBeUndefined();
    expect(boundExceeded(bound, { inputTokens: 5 }, 0.0014, 0.0014)).toBeUndefined();
    const fact = boundExceeded(bound, { outputTokens: 1000 }, 0.005, 0.0014)!;
    expect(fact).toEqual({
      outputTokens: 1000,
      maxOutputTokens: 100,
      overshootTokens: 900,
      overshootUsd: 0.005 - 0.0014,
    });
    expect(boundExceededMessage(fact)).toBe(
      'the response used 1000 output tokens, past its bound of 100 (900 over, $0.0036 past its worst case): the server ignores max tokens; the cap cannot be kept, so the batch stops',
    );
    expect(boundExceeded(bound, { outputTokens: 101 }, undefined, 0.0014)).toEqual({
      outputTokens: 101,
      maxOutputTokens: 100,
      overshootTokens: 1,
    });
  });

  it('under a strict cap ends the run budget_exceeded at once, says why in its record and journal line, and stops every budget it shares', async () => {
    const journal: unknown[] = [];
    const d = drive(
      { replies: [{ ...ignoring, toolCalls: [{ id: 'c1', name: 'read', input: {} }] }, ignoring], bound },
      {
        pricing,
        budget: { maxCostUsd: 1 },
        journal: true,
        sink: { write: () => undefined, journal: (e) => void journal.push(e) },
      },
    );
    const result = await d.adapter.runTurn('hi');
    expect(result.outcome).toBe('budget_exceeded');
    expect(result.error!.message).toBe(
      'the response used 1000 output tokens, past its bound of 100 (900 over, $0.0036 past its worst case): the server ignores max tokens; the cap cannot be kept, so the batch stops',
    );
    // The record's description says no further call was made.
    expect(d.adapter.machine.history().at(-1)!.description).toMatch(/so the batch stops; no further LLM call made$/);
    // No tool ran and no second call was made: the bound of the next cannot be trusted either.
    expect(d.agent.calls.map((c) => c.op)).toEqual(['llmCallBound', 'sendUserMessage']);
    expect(result.usage.costUsd).toBeCloseTo(0.005, 10);
    const last = d.adapter.machine.history().at(-1)!;
    expect(last.data).toMatchObject({
      outcome: 'budget_exceeded',
      limit: 'maxCostUsd',
      boundExceeded: { outputTokens: 1000, maxOutputTokens: 100, overshootTokens: 900 },
    });
    expect(journal).toContainEqual(
      expect.objectContaining({ type: 'llm', boundExceeded: expect.objectContaining({ overshootTokens: 900 }) }),
    );
    // The budget stays stopped: a second turn makes no call.
    const again = await d.adapter.runTurn('again');
    expect(again.outcome).toBe('budget_exceeded');
    expect(d.agent.calls.filter((c) => c.op === 'sendUserMessage')).toHaveLength(1);
  });

  it('with strict: false is recorded, and the run goes on (the overshoot it accepted)', async () => {
    const journal: unknown[] = [];
    const d = drive(
      { replies: [ignoring], bound },
      {
        pricing,
        budget: { maxCostUsd: 1, strict: false },
        journal: true,
        sink: { write: () => undefined, journal: (e) => void journal.push(e) },
      },
    );
    const result = await d.adapter.runTurn('hi');
    expect(result.outcome).toBe('end_of_turn');
    expect(journal).toContainEqual(
      expect.objectContaining({ type: 'llm', boundExceeded: expect.objectContaining({ overshootTokens: 900 }) }),
    );
  });
});

describe('a response past its bound, on a framework mirror', () => {
  it('under a strict cap ends the mirrored run budget_exceeded and stops the budgets it shares; with strict: false it is recorded', async () => {
    const shared = new Budget({ maxCostUsd: 1 }, { label: 'pool' });
    const mirror = new StepMirror({ logger: false, pricing, sharedBudgets: [shared] });
    mirror.runStart('hi');
    expect(await mirror.modelCallStart(bound)).toBeUndefined();
    mirror.modelResponse({ text: 'ok', model: 'm', usage: { inputTokens: 1000, outputTokens: 1000 } });
    expect(mirror.result?.outcome).toBe('budget_exceeded');
    expect(mirror.result?.error?.message).toMatch(
      /^the response used 1000 output tokens, past its bound of 100 \(900 over/,
    );
    expect(mirror.machine.history().at(-1)!.data).toMatchObject({
      outcome: 'budget_exceeded',
      boundExceeded: { outputTokens: 1000, maxOutputTokens: 100, overshootTokens: 900 },
    });
    // Every run sharing the pool meets the stop at its next check.
    expect(shared.spent()?.message).toMatch(/the cap cannot be kept, so the batch stops$/);

    const plain = new StepMirror({ logger: false, pricing, budget: { maxCostUsd: 1, strict: false } });
    plain.runStart('hi');
    expect(await plain.modelCallStart(bound)).toBeUndefined();
    plain.modelResponse({ text: 'ok', model: 'm', usage: { inputTokens: 1000, outputTokens: 1000 } });
    plain.runEnd();
    expect(plain.result?.outcome).toBe('end_of_turn');
  });
});

// A server that reported 200,000 input tokens for a request whose bound holds 1,000: $0.2 at
// $1 per million, a hundred times the bound's worst case, ten times a $0.02 cap.
const swollen = { text: 'ok', model: 'm', usage: { inputTokens: 200_000, outputTokens: 50 } };
const swollenFact = {
  inputTokens: 200_000,
  maxInputTokens: 1000,
  inputOvershootTokens: 199_000,
  overshootUsd: 0.2002 - 0.0014,
};
const warnings = (): {
  logger: { error(): void; warn(m: string): void; info(): void; debug(): void };
  said: string[];
} => {
  const said: string[] = [];
  return { said, logger: { error() {}, warn: (m: string) => void said.push(m), info() {}, debug() {} } };
};

describe('input past its bound', () => {
  it('is a fact with the input overshoot; a cost past the worst case alone is one too', () => {
    const fact = boundExceeded(bound, swollen.usage, 0.2002, 0.0014)!;
    expect(fact).toEqual(swollenFact);
    expect(fact.overshootUsd).toBeCloseTo(0.1988, 10);
    expect(boundExceededMessage(fact)).toBe(
      'the response used 200000 input tokens, past its bound of 1000 (199000 over, $0.1988 past its worst case): the server counted more input than the request holds (or its server tools added to it); the cap cannot be kept, so the batch stops',
    );
    // Both sides past: both said, the dollars with the last.
    expect(
      boundExceededMessage(boundExceeded(bound, { inputTokens: 2000, outputTokens: 200 }, undefined, 0.0014)!),
    ).toBe(
      'the response used 200 output tokens, past its bound of 100 (100 over) and 2000 input tokens, past its bound of 1000 (1000 over): the server ignores max tokens; the server counted more input than the request holds (or its server tools added to it); the cap cannot be kept, so the batch stops',
    );
    // Tokens within the bound, a cost past its worst case (a fee the bound did not price).
    expect(boundExceeded(bound, { inputTokens: 10, outputTokens: 10 }, 0.05, 0.0014)).toEqual({
      overshootUsd: 0.05 - 0.0014,
    });
    expect(boundExceeded(bound, { inputTokens: 1000, outputTokens: 100 }, 0.0014, 0.0014)).toBeUndefined();
  });

  it('on the adapter, under a strict cap: the run ends budget_exceeded with the fact in its record and journal line', async () => {
    const journal: unknown[] = [];
    const d = drive(
      { replies: [{ ...swollen, toolCalls: [{ id: 'c1', name: 'read', input: {} }] }, swollen], bound },
      {
        pricing,
        budget: { maxCostUsd: 0.02 },
        journal: true,
        sink: { write: () => undefined, journal: (e) => void journal.push(e) },
      },
    );
    const result = await d.adapter.runTurn('hi');
    expect(result.outcome).toBe('budget_exceeded');
    expect(result.error!.message).toMatch(
      /^the response used 200000 input tokens, past its bound of 1000 \(199000 over/,
    );
    expect(d.agent.calls.map((c) => c.op)).toEqual(['llmCallBound', 'sendUserMessage']);
    expect(d.adapter.machine.history().at(-1)!.data).toMatchObject({
      outcome: 'budget_exceeded',
      boundExceeded: { inputTokens: 200_000, maxInputTokens: 1000, inputOvershootTokens: 199_000 },
    });
    expect(journal).toContainEqual(
      expect.objectContaining({
        type: 'llm',
        boundExceeded: expect.objectContaining({ inputOvershootTokens: 199_000 }),
      }),
    );
  });

  it('on the adapter, with strict: false: the fact is in the journal line and a warning says it', async () => {
    const journal: unknown[] = [];
    const { logger, said } = warnings();
    const d = drive(
      { replies: [swollen], bound },
      {
        pricing,
        logger,
        budget: { maxCostUsd: 0.02, strict: false },
        journal: true,
        sink: { write: () => undefined, journal: (e) => void journal.push(e) },
      },
    );
    const result = await d.adapter.runTurn('hi');
    expect(result.outcome).toBe('end_of_turn');
    expect(journal).toContainEqual(
      expect.objectContaining({
        type: 'llm',
        boundExceeded: expect.objectContaining({ inputOvershootTokens: 199_000 }),
      }),
    );
    expect(said).toContainEqual(
      expect.stringMatching(
        /^sendUserMessage passed its bound: the response used 200000 input tokens, past its bound of 1000/,
      ),
    );
  });

  it('on a framework mirror: the same fact, tripping a strict cap; with strict: false recorded and warned', async () => {
    const journal: unknown[] = [];
    const mirror = new StepMirror({
      logger: false,
      pricing,
      budget: { maxCostUsd: 0.02 },
      journal: true,
      sink: { write: () => undefined, journal: (e) => void journal.push(e) },
    });
    mirror.runStart('hi');
    expect(await mirror.modelCallStart(bound)).toBeUndefined();
    mirror.modelResponse(swollen);
    expect(mirror.result?.outcome).toBe('budget_exceeded');
    expect(mirror.result?.error?.message).toMatch(/^the response used 200000 input tokens, past its bound of 1000/);
    expect(journal).toContainEqual(
      expect.objectContaining({
        type: 'llm',
        boundExceeded: expect.objectContaining({ inputOvershootTokens: 199_000 }),
      }),
    );

    const { logger, said } = warnings();
    // A bound is checked where one is planned: a strict cap, an external dollar cap, or the ledger (a journal).
    const plain = new StepMirror({
      logger,
      pricing,
      budget: { maxCostUsd: 0.02, strict: false },
      journal: true,
      sink: { write: () => undefined, journal: () => undefined },
    });
    plain.runStart('hi');
    expect(await plain.modelCallStart(bound)).toBeUndefined();
    plain.modelResponse(swollen);
    plain.runEnd();
    expect(plain.result?.outcome).toBe('end_of_turn');
    expect(said).toContainEqual(
      expect.stringMatching(/^sendUserMessage passed its bound: the response used 200000 input/),
    );
  });
});
