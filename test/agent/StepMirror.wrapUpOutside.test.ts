import type { Pricing } from '../../lib/agent/AgentLoop';
import type { SpentLimit } from '../../lib/agent/BudgetLimits';
import type { ExternalBudget, WrapHold } from '../../lib/agent/money/ExternalBudget';
import { StepMirror, type MirrorBoundOf, type MirrorCallFlags } from '../../lib/agent/StepMirror';
import { BUDGET_RAN_OUT } from '../../lib/agent/endings/finalForms';
import { emptyUsage, type UsageDelta } from '../../lib/agent/UsageTotals';
import { validateHistory } from '../../lib/history/validateHistory';

// A batch's `total.wrapUp` on a framework run: the mirror resolves the external budget's
// endings, sends each ordinary call's final-call hold to the budget (`keepUsd`), wraps up when
// the budget says the call does not fit beside every run's final hold (`wrapsUp`), and makes
// the final call as `final: true`, which takes that hold's place. The budget here keeps the
// holds in memory as the Redis script does.

// Dollars of 1/1024 an input token and 4/1024 an output token: every figure is exact in binary.
const pricing: Pricing = (u) => ((u.inputTokens ?? 0) + 4 * (u.outputTokens ?? 0)) / 1024;
const INSTRUCTION = 'Answer now.';
/** Each request: 100 input tokens (120 as the final call, the instruction added), at most 50 out. */
const boundOf = (flags: MirrorCallFlags) => ({
  inputTokens: flags.wrapUp === undefined ? 100 : 120,
  maxOutputTokens: 50,
  model: 'm',
});

/** A dollar cap outside the process that keeps each run's final-call hold beside its ordinary holds, as RedisBudget does. */
class KeepingBudget implements ExternalBudget {
  readonly capsCost = true;
  readonly strict = true;
  readonly holdsWrapUp = true;
  readonly label = 'total';
  spent = 0;
  held = 0;
  kept = 0;
  /** The highest spent + held it ever let through. */
  peak = 0;
  readonly asked: Array<{ costUsd: number; wrapUp?: WrapHold } | undefined> = [];

  /** `wrapAt`: the ordinary call (1 for the first) refused beside the final holds whatever the figures. */
  constructor(
    readonly cap: number,
    readonly endings: ExternalBudget['endings'],
    readonly wrapAt = Infinity,
  ) {}

  reserve(kind: 'llm' | 'tool', hold?: { costUsd: number; wrapUp?: WrapHold }): Promise<SpentLimit | undefined> {
    if (kind === 'tool') return Promise.resolve(undefined);
    this.asked.push(hold);
    const cost = hold?.costUsd ?? 0;
    const wrap = hold?.wrapUp;
    const keep = wrap === undefined ? this.kept : 'keepUsd' in wrap ? wrap.keepUsd : 0;
    const after = this.spent + this.held + (keep - this.kept) + cost;
    const keeps = wrap !== undefined && 'keepUsd' in wrap;
    const ordinary = this.asked.filter((h) => h?.wrapUp !== undefined && 'keepUsd' in h.wrapUp).length;
    if (after > this.cap || (keeps && ordinary === this.wrapAt)) {
      const used = this.spent + this.held;
      const refusal = { limit: 'maxCostUsd' as const, used, max: this.cap, hold: cost };
      // Beside an ordinary call's kept hold the run wraps up; its earlier hold stays.
      if (keeps) return Promise.resolve({ ...refusal, wrapsUp: true, message: 'does not fit beside the final holds' });
      return Promise.resolve({ ...refusal, message: 'does not fit under the cap' });
    }
    this.held += cost + keep - this.kept;
    this.kept = keep;
    this.peak = Math.max(this.peak, this.spent + this.held);
    return Promise.resolve(undefined);
  }

  charge(delta: UsageDelta, release?: { costUsd: number }): Promise<SpentLimit | undefined> {
    this.spent += delta.costUsd ?? 0;
    this.held -= release?.costUsd ?? 0;
    return Promise.resolve(undefined);
  }

  figures() {
    return Promise.resolve({ limits: { maxCostUsd: this.cap }, usage: { ...emptyUsage(), costUsd: this.spent } });
  }
}

/**
 * Drives one endless tool-calling run through the mirror until it ends; the flags of each call,
 * in order. `resultTokens(i)`: the tokens the result of call `i` (from 0) adds to the next request.
 */
async function endlessRun(mirror: StepMirror, resultTokens = (_i: number) => 0): Promise<MirrorCallFlags[]> {
  const sent: MirrorCallFlags[] = [];
  mirror.runStart('work');
  let carried = 0;
  const bound: MirrorBoundOf = (flags) => {
    const b = boundOf(flags);
    return { ...b, inputTokens: b.inputTokens + (flags.withheld === undefined ? carried : 0) };
  };
  for (let i = 0; mirror.running && i < 100; i++) {
    const planned = await mirror.modelCallPlan(bound);
    if (planned instanceof Error) break;
    sent.push(planned);
    const usage = { inputTokens: 100, outputTokens: 40 };
    if (planned.wrapUp !== undefined) {
      mirror.modelResponse({ text: 'the answer', usage: { inputTokens: 120, outputTokens: 20 }, model: 'm' });
      break;
    }
    const call = { id: `c${i}`, name: 'look', input: {} };
    mirror.modelResponse({ toolCalls: [call], usage, model: 'm' });
    expect(await mirror.toolStart(call)).toBeUndefined();
    mirror.toolEnd(call.id, { output: 'seen' });
    carried = resultTokens(i);
  }
  return sent;
}

describe('StepMirror under an external budget that keeps final-call holds (total.wrapUp)', () => {
  it('sends each ordinary call with keepUsd, wraps up when the budget says so, and makes the final call as final: true', async () => {
    const total = new KeepingBudget(3, { wrapUp: { instruction: INSTRUCTION } });
    const mirror = new StepMirror({
      logger: false,
      pricing,
      externalBudgets: [total],
      honours: { wrapUp: true, budgetNote: true },
    });
    const sent = await endlessRun(mirror);
    expect(mirror.result).toMatchObject({ outcome: 'wrapped_up', text: 'the answer' });
    const history = mirror.machine.history();
    expect(validateHistory(history, mirror.machine.table).issues).toEqual([]);
    expect(history.slice(-2).map((r) => r.to)).toEqual(['WrappingUp', 'EndOfTurn']);
    expect(history.at(-2)!.data).toMatchObject({ reason: expect.stringMatching(/beside the final holds/) });
    expect(history.at(-1)!.data).toMatchObject({ outcome: 'wrapped_up', answer: 'the answer' });
    // Every ordinary call kept the final call's worst case beside it ($0.47: 120 in + 2 × 50 + 64 slack, 50 out);
    // the last was refused, and the final call took the kept hold's place.
    const finalHold = (120 + 100 + 64 + 4 * 50) / 1024;
    const ordinary = total.asked.slice(0, -1);
    expect(ordinary.length).toBeGreaterThan(3);
    for (const hold of ordinary) expect(hold).toEqual({ costUsd: 300 / 1024, wrapUp: { keepUsd: finalHold } });
    expect(total.asked.at(-1)).toEqual({ costUsd: 320 / 1024, wrapUp: { final: true } });
    // The refused call was made as the final one: one flag set more than the calls let through.
    expect(sent).toHaveLength(ordinary.length);
    expect(sent.at(-1)).toEqual({ wrapUp: INSTRUCTION });
    expect(sent.slice(0, -1).every((f) => f.wrapUp === undefined)).toBe(true);
    // Money: never past the cap, and the final call's hold went with it (no final hold kept).
    expect(total.peak).toBeLessThanOrEqual(3);
    expect(mirror.usage.costUsd).toBeLessThanOrEqual(3);
    expect(total.kept).toBe(0);
  });

  it("total.visible: each call carries the note of what is left of the external budget's figures", async () => {
    const total = new KeepingBudget(3, { wrapUp: true, visible: true });
    const mirror = new StepMirror({
      logger: false,
      pricing,
      externalBudgets: [total],
      honours: { wrapUp: true, budgetNote: true },
    });
    const sent = await endlessRun(mirror);
    expect(mirror.result?.outcome).toBe('wrapped_up');
    expect(sent[0]!.budgetNote).toBe('Budget left: $3.0000 of $3.0000 cost.');
    expect(sent.every((f) => /^Budget left: \$\d\.\d{4} of \$3\.0000 cost\.$/.test(f.budgetNote ?? ''))).toBe(true);
    expect(sent.at(-1)!.budgetNote).not.toBe(sent[0]!.budgetNote);
  });

  it("ends the run in Error, naming the budget, when an external budget's figures cannot be read for the note", async () => {
    const total = new KeepingBudget(3, { visible: true });
    total.figures = () => Promise.reject(new Error('Redis is unreachable'));
    const mirror = new StepMirror({
      logger: false,
      pricing,
      externalBudgets: [total],
      honours: { wrapUp: true, budgetNote: true },
    });
    mirror.runStart('work');
    const planned = await mirror.modelCallPlan(boundOf);
    expect(planned).toBeInstanceOf(Error);
    expect((planned as Error).message).toBe('externalBudgets[0].figures() failed: Redis is unreachable');
    expect(mirror.result?.outcome).toBe('error');
    expect(total.asked).toEqual([]);
  });

  it('withholds the tool results of the final call when they would not fit in the hold kept outside', async () => {
    // The third call is refused beside the final holds; the result of the second it carries is
    // 1,000 tokens long, more than the hold kept after it (made for results no longer than a response).
    const total = new KeepingBudget(64, { wrapUp: true }, 3);
    const mirror = new StepMirror({
      logger: false,
      pricing,
      externalBudgets: [total],
      honours: { wrapUp: true, budgetNote: true },
    });
    const sent = await endlessRun(mirror, (i) => (i === 1 ? 1000 : 0));
    expect(mirror.result?.outcome).toBe('wrapped_up');
    expect(sent).toHaveLength(3);
    expect(sent.at(-1)).toMatchObject({ withheld: BUDGET_RAN_OUT });
    // The final call, its results withheld, fits in the hold it takes the place of.
    expect(total.asked.at(-1)).toEqual({ costUsd: 320 / 1024, wrapUp: { final: true } });
    expect(total.kept).toBe(0);
  });

  it('sends the final call without the last round when, its results withheld, it would still outgrow the hold kept outside', async () => {
    // Each round adds 300 tokens to the next request even with its results withheld (more than
    // the 2 × 50 + 64 the hold grows by for it). The third call is refused beside the final
    // holds; the hold kept after the second is 784/1024 (120 + 300 in, grown by 164; 50 out).
    const total = new KeepingBudget(64, { wrapUp: true }, 3);
    const mirror = new StepMirror({
      logger: false,
      pricing,
      externalBudgets: [total],
      honours: { wrapUp: true, budgetNote: true },
    });
    mirror.runStart('work');
    let rounds = 0;
    const bound: MirrorBoundOf = (flags) => {
      const b = boundOf(flags);
      return { ...b, inputTokens: b.inputTokens + 300 * (flags.withoutLastRound === true ? rounds - 1 : rounds) };
    };
    const sent: MirrorCallFlags[] = [];
    for (let i = 0; mirror.running && i < 10; i++) {
      const planned = await mirror.modelCallPlan(bound);
      if (planned instanceof Error) break;
      sent.push(planned);
      if (planned.wrapUp !== undefined) {
        mirror.modelResponse({ text: 'the answer', usage: { inputTokens: 420, outputTokens: 20 }, model: 'm' });
        break;
      }
      const call = { id: `c${i}`, name: 'look', input: {} };
      mirror.modelResponse({ toolCalls: [call], usage: { inputTokens: 100, outputTokens: 40 }, model: 'm' });
      expect(await mirror.toolStart(call)).toBeUndefined();
      mirror.toolEnd(call.id, { output: 'seen' });
      rounds += 1;
    }
    expect(mirror.result?.outcome).toBe('wrapped_up');
    // The third call (100 + 600 in, 50 out), refused beside its final hold.
    expect(total.asked.at(-2)).toEqual({ costUsd: 900 / 1024, wrapUp: { keepUsd: 1084 / 1024 } });
    expect(sent.at(-1)).toMatchObject({ withheld: BUDGET_RAN_OUT, withoutLastRound: true });
    // With its results withheld it would need 920/1024; without the last round, 620/1024, within the 784/1024 kept.
    expect(total.asked.at(-1)).toEqual({ costUsd: 620 / 1024, wrapUp: { final: true } });
    expect(total.kept).toBe(0);
  });

  it('refuses, by name, an external dollar cap that keeps no final call beside the wrapUp, and an integration that cannot make the final call', () => {
    const total = new KeepingBudget(3, { wrapUp: true });
    const unkept = { capsCost: true, reserve: async () => undefined, charge: async () => undefined };
    const honours = { wrapUp: true, budgetNote: true };
    expect(() => new StepMirror({ logger: false, pricing, externalBudgets: [total, unkept], honours })).toThrow(
      /^Expected `externalBudgets\[1\]` to be left out beside `total\.wrapUp` on a mirror: a dollar cap outside the process that holds no final call \(its `holdsWrapUp` is not true\)/,
    );
    expect(() => new StepMirror({ logger: false, externalBudgets: [total], honours })).toThrow(
      /^Expected `pricing` to be a function pricing the calls, since `total\.wrapUp` is set/,
    );
    expect(() => new StepMirror({ logger: false, pricing, externalBudgets: [total] })).toThrow(
      /^Expected `total\.wrapUp` to be left out of a framework run \(StepMirror\): this mirror's calls are made by the framework/,
    );
  });
});
