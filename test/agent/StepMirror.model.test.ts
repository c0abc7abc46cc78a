// StepMirror.model(call): the one step an integration needs for a model call. Served from the
// journal in a resumed run, else gated, sent and charged; its bound asked only when needed, a
// failure and an unreadable answer reported, each hook and each refusal.
import type { Pricing } from '../../lib/agent/AgentLoop';
import { Budget } from '../../lib/agent/money/Budget';
import { StepMirror } from '../../lib/agent/StepMirror';
import { ONE_ANSWER_JOURNAL } from '../helpers/oneAnswerJournal';
import { manualClock } from '../helpers/manualClock';
import { BudgetExceededError, OperationError, TurnCancelledError } from '../../lib/agent/TurnError';

// $0.001 a token, in or out: a bound of 250 + 250 tokens holds $0.5.
const pricing: Pricing = (u) => ((u.inputTokens ?? 0) + (u.outputTokens ?? 0)) * 0.001;
const BOUND = { inputTokens: 250, maxOutputTokens: 250, model: 'm' };

/** A framework's answer, in its own shape: the mirror reads it through `read`. */
interface Answer {
  say: string;
  tokens: [number, number];
}
const read = (a: Answer) => ({ text: a.say, usage: { inputTokens: a.tokens[0], outputTokens: a.tokens[1] } });
const served = (r: { text?: string }): Answer => ({ say: `served: ${r.text ?? ''}`, tokens: [0, 0] });

describe('StepMirror.model', () => {
  it('singleRun: a call after the run ended is refused with that end; without it, the call starts the next run', async () => {
    const send = () => Promise.resolve<Answer>({ say: 'hi', tokens: [10, 10] });
    // An answer that asks for a tool: the run goes on after it, unless its cost ended it.
    const asks = (a: Answer) => ({ ...read(a), toolCalls: [{ id: 'c1', name: 'look', input: {} }] });
    const one = new StepMirror({
      logger: false,
      pricing,
      budget: { maxCostUsd: 0.015, strict: false },
      singleRun: true,
    });
    one.runStart('go');
    await one.model({ send, read: asks, served });
    // Its cost passed the cap: the tool it asked for is refused, and the next call ends the run.
    await expect(one.tool({ id: 'c1', name: 'look', input: {} }, () => 'seen')).rejects.toThrow(BudgetExceededError);
    await expect(one.model({ send, read, served })).rejects.toThrow(BudgetExceededError);
    const ended = one.result;
    expect(ended).toMatchObject({ outcome: 'budget_exceeded', usage: { llmCalls: 1, costUsd: 0.02 } });
    await expect(one.model({ send, read, served })).rejects.toThrow(BudgetExceededError);
    // The same run, not another: its result and usage stand.
    expect(one.result).toBe(ended);
    expect(one.running).toBe(false);

    const many = new StepMirror({ logger: false, pricing });
    many.runStart('go');
    await many.model({ send, read, served });
    many.runEnd();
    const first = many.result;
    await many.model({ send, read, served });
    expect(many.running).toBe(true);
    expect(many.runEnd()).not.toBe(first);
    expect(() => new StepMirror({ logger: false, singleRun: 'yes' as never })).toThrow(/singleRun.*true or false/s);
  });

  it("spent() after the run ended charges no more time: the mirror's usage stays the ended run's", async () => {
    const clock = manualClock();
    const mirror = new StepMirror({ logger: false, pricing, clock: clock.now, budget: { maxWallMs: 60_000 } });
    mirror.runStart('go');
    clock.advance(100);
    await mirror.model({ send: () => Promise.resolve<Answer>({ say: 'hi', tokens: [1, 1] }), read, served });
    const ended = mirror.runEnd();
    clock.advance(120_000);
    expect(mirror.spent()).toBeUndefined();
    expect(mirror.usage).toEqual(ended.usage);
  });

  it('sends the call, charges what read says of the answer, and resolves to the answer as the framework gave it', async () => {
    const mirror = new StepMirror({ logger: false, pricing });
    mirror.runStart('go');
    const answer = await mirror.model({
      send: () => Promise.resolve<Answer>({ say: 'hi', tokens: [100, 20] }),
      read,
      served,
    });
    expect(answer).toEqual({ say: 'hi', tokens: [100, 20] });
    expect(mirror.usage).toMatchObject({ llmCalls: 1, inputTokens: 100, outputTokens: 20, costUsd: 0.12 });
    expect(mirror.runEnd()).toMatchObject({ outcome: 'end_of_turn', text: 'hi' });
  });

  it('serves a resumed run its journaled response through served, sending nothing', async () => {
    const mirror = new StepMirror({ logger: false, resumeFrom: { journal: ONE_ANSWER_JOURNAL } });
    mirror.runStart('go');
    const sent: string[] = [];
    const answer = await mirror.model({
      send: () => (sent.push('sent'), Promise.resolve<Answer>({ say: 'live', tokens: [1, 1] })),
      read,
      served,
    });
    expect(answer).toEqual({ say: 'served: hello', tokens: [0, 0] });
    expect(sent).toEqual([]);
    expect(mirror.resumed).toMatchObject({ recordedCalls: 1 });
  });

  it('asks for the bound only when the mirror needs one, and holds it under a strict cap', async () => {
    const asked: string[] = [];
    const bound = () => (asked.push('bound'), BOUND);
    const plain = new StepMirror({ logger: false });
    plain.runStart('go');
    await plain.model({ send: () => Promise.resolve<Answer>({ say: 'a', tokens: [1, 1] }), read, served, bound });
    expect(asked).toEqual([]);

    const shared = new Budget({ maxCostUsd: 1, strict: true });
    const strict = new StepMirror({ logger: false, pricing, sharedBudgets: [shared] });
    strict.runStart('go');
    const held: number[] = [];
    await strict.model({
      send: () => (held.push(shared.held), Promise.resolve<Answer>({ say: 'b', tokens: [125, 125] })),
      read,
      served,
      bound,
    });
    expect(asked).toEqual(['bound']);
    expect(held).toEqual([0.5]);
    expect(shared.held).toBe(0);
    expect(strict.usage.costUsd).toBeCloseTo(0.25, 12);
  });

  it('refuses a call a strict cap cannot bound, saying why the framework gave none, before sending; a refuse hook gets it', async () => {
    const shared = new Budget({ maxCostUsd: 1, strict: true });
    const mirror = new StepMirror({ logger: false, pricing, sharedBudgets: [shared] });
    mirror.runStart('go');
    const sent: string[] = [];
    const refused: unknown[] = [];
    await expect(
      mirror.model({
        send: () => (sent.push('sent'), Promise.resolve<Answer>({ say: 'x', tokens: [1, 1] })),
        read,
        served,
        bound: () => 'the request sets no max output tokens',
        refuse: (stop) => {
          refused.push(stop);
          throw new Error('the framework stopped');
        },
      }),
    ).rejects.toThrow('the framework stopped');
    expect(sent).toEqual([]);
    expect(refused[0]).toBeInstanceOf(OperationError);
    expect(String((refused[0] as Error).message)).toContain('the request sets no max output tokens');
    expect(mirror.result).toMatchObject({ outcome: 'error' });
  });

  it('refuses the call of a cancelled run without sending it, throwing the reason by default', async () => {
    const mirror = new StepMirror({ logger: false });
    mirror.runStart('go');
    mirror.cancel('the user left');
    const sent: string[] = [];
    await expect(
      mirror.model({
        send: () => (sent.push('sent'), Promise.resolve<Answer>({ say: 'x', tokens: [1, 1] })),
        read,
        served,
      }),
    ).rejects.toBeInstanceOf(TurnCancelledError);
    expect(sent).toEqual([]);
    expect(mirror.result).toMatchObject({ outcome: 'cancelled' });
  });

  it('reports a failed send and rethrows it; the next call through model is the retry', async () => {
    const mirror = new StepMirror({ logger: false });
    mirror.runStart('go');
    const failure = Object.assign(new Error('rate limited'), { status: 429 });
    await expect(mirror.model({ send: () => Promise.reject(failure), read, served })).rejects.toBe(failure);
    expect(mirror.running).toBe(true);
    const answer = await mirror.model({
      send: () => Promise.resolve<Answer>({ say: 'ok', tokens: [3, 4] }),
      read,
      served,
    });
    expect(answer.say).toBe('ok');
    expect(mirror.runEnd()).toMatchObject({ outcome: 'end_of_turn', text: 'ok' });
    expect(mirror.machine.history().filter((r) => r.to === 'SendingToLLM')).toHaveLength(1);
  });

  it('holds an answer it cannot read at its worst case, as uncertain: it came back, so it may be billed', async () => {
    const shared = new Budget({ maxCostUsd: 1, strict: true });
    const mirror = new StepMirror({ logger: false, pricing, sharedBudgets: [shared] });
    mirror.runStart('go');
    await expect(
      mirror.model({
        send: () => Promise.resolve<Answer>({ say: 'x', tokens: [1, 1] }),
        // A reader's error with a status of its own: the answer came back all the same, so it is not released as a 429.
        read: () => {
          throw Object.assign(new Error('no usage in this answer'), { status: 429 });
        },
        served,
        bound: () => BOUND,
      }),
    ).rejects.toThrow('no usage in this answer');
    expect(shared.usage.uncertainUsd).toBeCloseTo(0.5, 12);
    expect(shared.usage.costUsd).toBeCloseTo(0.5, 12);
  });

  it('hands send the flags a final call must carry when the integration honours wrapUp, and the run ends wrapped_up', async () => {
    // $0.001 a token: each call's bound holds $0.2 of the $1 cap and costs $0.1; the final call's hold is kept aside.
    const mirror = new StepMirror({
      logger: false,
      pricing,
      budget: { maxCostUsd: 1, strict: true, wrapUp: true },
      honours: { wrapUp: true, budgetNote: true },
    });
    mirror.runStart('go');
    const flagsSent: unknown[] = [];
    for (let i = 0; mirror.running && i < 10; i++) {
      const answer = await mirror.model({
        send: (flags) => {
          flagsSent.push(flags);
          return Promise.resolve<Answer>({ say: flags.wrapUp === undefined ? '' : 'the answer', tokens: [60, 40] });
        },
        read: (a) => ({
          ...read(a),
          model: 'm',
          ...(a.say === '' && { toolCalls: [{ id: `c${i}`, name: 'look', input: {} }] }),
        }),
        served,
        bound: (flags) => ({ inputTokens: flags.wrapUp === undefined ? 100 : 110, maxOutputTokens: 100, model: 'm' }),
      });
      if (answer.say === '') await mirror.tool({ id: `c${i}`, name: 'look', input: {} }, () => 'seen');
    }
    const finals = flagsSent.map((f) => (f as { wrapUp?: string }).wrapUp !== undefined);
    expect(finals.length).toBeGreaterThan(1);
    expect(finals).toEqual([...finals.slice(0, -1).map(() => false), true]);
    expect(mirror.result).toMatchObject({ outcome: 'wrapped_up', text: 'the answer' });
  });

  it('runs prepare only for a call it does not serve, before the gate; what prepare throws costs nothing', async () => {
    const prepared: string[] = [];
    const resumed = new StepMirror({ logger: false, resumeFrom: { journal: ONE_ANSWER_JOURNAL } });
    resumed.runStart('go');
    const call = {
      prepare: () => void prepared.push('prepare'),
      send: () => Promise.resolve<Answer>({ say: 'live', tokens: [1, 1] }),
      read,
      served,
    };
    expect((await resumed.model(call)).say).toBe('served: hello');
    expect(prepared).toEqual([]);

    const shared = new Budget({ maxCostUsd: 1, strict: true });
    const mirror = new StepMirror({ logger: false, pricing, sharedBudgets: [shared] });
    mirror.runStart('go');
    const noModel = new Error('no model named m: the provider has no API key');
    await expect(
      mirror.model({
        ...call,
        prepare: () => Promise.reject(noModel),
        bound: () => BOUND,
      }),
    ).rejects.toBe(noModel);
    expect(mirror.usage).toMatchObject({ llmCalls: 0, costUsd: 0 });
    expect(shared.held).toBe(0);
    const seen: number[] = [];
    await mirror.model({
      ...call,
      prepare: () => void seen.push(shared.held),
      send: () => (seen.push(shared.held), Promise.resolve<Answer>({ say: 'x', tokens: [1, 1] })),
      bound: () => BOUND,
    });
    // Nothing held while it prepared; the call's worst case held while it was sent.
    expect(seen).toEqual([0, 0.5]);
  });

  it("reports a failure itself when the integration's failed hook throws, and throws the send's error", async () => {
    const shared = new Budget({ maxCostUsd: 1, strict: true });
    const mirror = new StepMirror({ logger: false, pricing, sharedBudgets: [shared] });
    mirror.runStart('go');
    const dropped = new Error('socket hang up');
    await expect(
      mirror.model({
        send: () => Promise.reject(dropped),
        read,
        served,
        bound: () => BOUND,
        failed: () => {
          throw new Error('a bug in the integration');
        },
      }),
    ).rejects.toBe(dropped);
    // Its hold ended: charged at its worst case as uncertain (the request may have left), not kept held.
    expect(shared.held).toBe(0);
    expect(shared.usage.uncertainUsd).toBeCloseTo(0.5, 12);
  });

  it('refuses a call object it cannot use, by name, before anything is reported', async () => {
    const mirror = new StepMirror({ logger: false });
    mirror.runStart('go');
    const ok = { send: () => Promise.resolve<Answer>({ say: 'x', tokens: [1, 1] }), read, served };
    await expect(mirror.model(null as never)).rejects.toThrow(
      'Expected `call` to be an object { send, read, served, prepare?, bound?, failed?, refuse? }',
    );
    await expect(mirror.model({ ...ok, served: undefined } as never)).rejects.toThrow(
      'Expected `call.served` to be a function',
    );
    await expect(mirror.model({ ...ok, boundOf: () => BOUND } as never)).rejects.toThrow(
      'Expected `call.boundOf` to be left out: StepMirror.model takes send, read, served, prepare, bound, failed and refuse',
    );
    await expect(mirror.model({ ...ok, bound: BOUND } as never)).rejects.toThrow(
      'Expected `call.bound` to be a function, or left out',
    );
    expect(mirror.usage.llmCalls).toBe(0);
    expect((await mirror.model(ok)).say).toBe('x');
  });
});
