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
