import type { Pricing } from '../../lib/agent/AgentLoop';
import { StepMirror, type MirrorBoundOf } from '../../lib/agent/StepMirror';
import { BUDGET_RAN_OUT } from '../../lib/agent/endings/finalForms';
import { validateHistory } from '../../lib/history/validateHistory';

// A mirror's final call under a strict cap with wrapUp, when each round's messages (its tool
// calls' ids and names, the results' envelopes) outweigh what the final call's hold grows by for
// it (twice the max output tokens and a little): even with its results withheld, the final call
// outgrows the hold kept for it, and is sent without the last round — the request the hold was
// worked out from — so that it fits, and the run ends with its answer.

// Dollars of 1/1024 an input token and 4/1024 an output token: every figure is exact in binary.
const pricing: Pricing = (u) => ((u.inputTokens ?? 0) + 4 * (u.outputTokens ?? 0)) / 1024;
/** Tokens each round adds to the next request even with its results withheld: more than 2 × 50 + 64. */
const ROUND = 300;
/** Tokens the results of a round add beside its messages. */
const RESULTS = 40;

describe('StepMirror with budget.wrapUp: a final call no longer than its hold', () => {
  it('leaves the last round out of a final call that does not fit with its results withheld, and ends wrapped_up', async () => {
    // After two calls: spent 820, the final call's hold 824 (120 + 300 + 40 in, grown by
    // 2 × 50 + 64, and 50 out); the third call grows it by 300 and is refused with 86 left. The
    // final call with results withheld needs 920 (120 + 2 × 300 in, 50 out) of the 910 its hold
    // and the room make; without the last round, 620.
    const cap = 1730 / 1024;
    const mirror = new StepMirror({
      logger: false,
      pricing,
      budget: { maxCostUsd: cap, strict: true, wrapUp: true },
      honours: { wrapUp: true, budgetNote: true },
    });
    mirror.runStart('work');
    let rounds = 0;
    const boundOf: MirrorBoundOf = (flags) => {
      const kept = flags.withoutLastRound === true ? rounds - 1 : rounds;
      const results = rounds > 0 && flags.withheld === undefined && flags.withoutLastRound !== true ? RESULTS : 0;
      const inputTokens = (flags.wrapUp === undefined ? 100 : 120) + kept * ROUND + results;
      return { inputTokens, maxOutputTokens: 50, model: 'm' };
    };
    const sent = [];
    for (let i = 0; mirror.running && i < 10; i++) {
      const planned = await mirror.modelCallPlan(boundOf);
      if (planned instanceof Error) break;
      sent.push(planned);
      if (planned.wrapUp !== undefined) {
        mirror.modelResponse({ text: 'the answer', usage: { inputTokens: 420, outputTokens: 20 }, model: 'm' });
        break;
      }
      const call = { id: `c${i}`, name: 'look', input: {} };
      const usage = { inputTokens: 100 + rounds * ROUND, outputTokens: 40 };
      mirror.modelResponse({ toolCalls: [call], usage, model: 'm' });
      expect(await mirror.toolStart(call)).toBeUndefined();
      mirror.toolEnd(call.id, { output: 'seen' });
      rounds += 1;
    }
    expect([mirror.result?.outcome, mirror.result?.error?.message]).toEqual(['wrapped_up', undefined]);
    expect(mirror.result?.text).toBe('the answer');
    expect(sent).toHaveLength(3);
    expect(sent.at(-1)).toMatchObject({ wrapUp: expect.any(String), withheld: BUDGET_RAN_OUT, withoutLastRound: true });
    expect(mirror.usage.costUsd).toBe(1320 / 1024);
    expect(mirror.usage.costUsd).toBeLessThanOrEqual(cap);
    const history = mirror.machine.history();
    expect(validateHistory(history, mirror.machine.table).issues).toEqual([]);
    expect(history.slice(-2).map((r) => r.to)).toEqual(['WrappingUp', 'EndOfTurn']);
  });

  it('sends the results withheld, the last round kept, when that fits', async () => {
    // As above, with results too long for the room: withheld, the final call fits with the last round in it.
    const cap = 1860 / 1024;
    const mirror = new StepMirror({
      logger: false,
      pricing,
      budget: { maxCostUsd: cap, strict: true, wrapUp: true },
      honours: { wrapUp: true, budgetNote: true },
    });
    mirror.runStart('work');
    let rounds = 0;
    const boundOf: MirrorBoundOf = (flags) => {
      const kept = flags.withoutLastRound === true ? rounds - 1 : rounds;
      // Results too long for the room: withheld.
      const results = rounds > 0 && flags.withheld === undefined && flags.withoutLastRound !== true ? 1000 : 0;
      const inputTokens = (flags.wrapUp === undefined ? 100 : 120) + kept * ROUND + results;
      return { inputTokens, maxOutputTokens: 50, model: 'm' };
    };
    const sent = [];
    for (let i = 0; mirror.running && i < 10; i++) {
      const planned = await mirror.modelCallPlan(boundOf);
      if (planned instanceof Error) break;
      sent.push(planned);
      if (planned.wrapUp !== undefined) {
        // Within its bound (120 + 300 in: one round kept, its results withheld).
        mirror.modelResponse({ text: 'the answer', usage: { inputTokens: 420, outputTokens: 20 }, model: 'm' });
        break;
      }
      const call = { id: `c${i}`, name: 'look', input: {} };
      mirror.modelResponse({
        toolCalls: [call],
        usage: { inputTokens: 100 + rounds * ROUND, outputTokens: 40 },
        model: 'm',
      });
      expect(await mirror.toolStart(call)).toBeUndefined();
      mirror.toolEnd(call.id, { output: 'seen' });
      rounds += 1;
    }
    expect([mirror.result?.outcome, mirror.result?.error?.message]).toEqual(['wrapped_up', undefined]);
    expect(sent.at(-1)).toMatchObject({ withheld: BUDGET_RAN_OUT });
    expect(sent.at(-1)!.withoutLastRound).toBeUndefined();
    expect(mirror.usage.costUsd).toBeLessThanOrEqual(cap);
  });
});
