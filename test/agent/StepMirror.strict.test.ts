import { Budget } from '../../lib/agent/money/Budget';
import type { ExternalBudget } from '../../lib/agent/money/ExternalBudget';
import { StepMirror } from '../../lib/agent/StepMirror';
import { BudgetExceededError, OperationError } from '../../lib/agent/TurnError';
import type { Pricing } from '../../lib/agent/AgentLoop';
import { InvalidArgumentError } from '../../lib/machine/InvalidArgumentError';
import { validateHistory } from '../../lib/history/validateHistory';

// $0.001 a token, in or out: a bound of 250 + 250 tokens holds $0.5.
const pricing: Pricing = (u) => ((u.inputTokens ?? 0) + (u.outputTokens ?? 0)) * 0.001;
const bound = { inputTokens: 250, maxOutputTokens: 250, model: 'm' };
const toolResponse = (i: number) => ({
  text: '',
  toolCalls: [{ id: `c${i}`, name: 'look', input: {} }],
  usage: { inputTokens: 125, outputTokens: 125 },
});

function strictMirror(shared: Budget, extra: Partial<ConstructorParameters<typeof StepMirror>[0]> = {}): StepMirror {
  return new StepMirror({ logger: false, pricing, sharedBudgets: [shared], ...extra });
}

describe('StepMirror under a strict maxCostUsd', () => {
  it('holds each call’s worst case before it, releases it at the response, and refuses the call that would pass the cap', async () => {
    const shared = new Budget({ maxCostUsd: 1, strict: true });
    const mirror = strictMirror(shared);
    mirror.runStart('look around');
    const made: number[] = [];
    let refused: unknown;
    for (let i = 1; i <= 10; i++) {
      const stop = await mirror.modelCallStart(bound);
      if (stop !== undefined) {
        refused = stop;
        break;
      }
      expect(shared.held).toBe(0.5);
      made.push(i);
      mirror.modelResponse(toolResponse(i));
      expect(shared.held).toBe(0);
      expect(await mirror.toolStart({ id: `c${i}`, name: 'look' })).toBeUndefined();
      mirror.toolEnd(`c${i}`, { output: 'ok' });
    }
    // $0.25 a call: the fourth call's worst case ($0.5) does not fit beside $0.75 spent.
    expect(made).toEqual([1, 2, 3]);
    expect(refused).toBeInstanceOf(BudgetExceededError);
    expect(shared.usage.costUsd).toBe(0.75);
    expect(shared.usage.costUsd).toBeLessThanOrEqual(1);
    expect(shared.held).toBe(0);
    expect(mirror.result?.outcome).toBe('budget_exceeded');
    const last = mirror.machine.history().at(-1)!;
    expect(last.to).toBe('Error');
    expect(last.data).toMatchObject({ limit: 'maxCostUsd', used: 0.75, max: 1, hold: 0.5, outcome: 'budget_exceeded' });
    expect(validateHistory(mirror.machine.history()).ok).toBe(true);
  });

  it('charges a failed attempt that may have left at its hold, and one whose end was never reported; releases one never sent', async () => {
    const shared = new Budget({ maxCostUsd: 2, strict: true });
    const mirror = strictMirror(shared);
    mirror.runStart('hi');
    expect(await mirror.modelCallStart(bound)).toBeUndefined();
    expect(shared.held).toBe(0.5);
    mirror.modelCallFailed(new Error('503'), { willRetry: true });
    expect(shared.held).toBe(0);
    expect(shared.usage.costUsd).toBe(0.5);
    // Connection refused: the request never left, nothing is charged.
    expect(await mirror.modelCallStart(bound)).toBeUndefined();
    mirror.modelCallFailed(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }));
    expect(shared.usage.costUsd).toBe(0.5);
    expect(await mirror.modelCallStart(bound)).toBeUndefined();
    // The framework retried without reporting the failure: the earlier attempt may have been billed.
    expect(await mirror.modelCallStart(bound)).toBeUndefined();
    expect(shared.held).toBe(0.5);
    expect(shared.usage.costUsd).toBe(1);
    mirror.modelCallFailed(new Error('503'), { willRetry: false });
    expect(shared.held).toBe(0);
    expect(shared.usage.costUsd).toBe(1.5);
    expect(mirror.result?.outcome).toBe('error');
    expect(mirror.usage.costUsd).toBe(1.5);
  });

  it('charges a response of unknown cost at its hold, and an attempt in flight when the run ends', async () => {
    const unknownModel: Pricing = (u, { model }) => (model === 'm' ? pricing(u, { model }) : undefined);
    const shared = new Budget({ maxCostUsd: 2, strict: true });
    const mirror = strictMirror(shared, { pricing: unknownModel });
    mirror.runStart('hi');
    expect(await mirror.modelCallStart(bound)).toBeUndefined();
    mirror.modelResponse({ ...toolResponse(1), model: 'm-2025-01-01' });
    expect(shared.usage.costUsd).toBe(0.5);
    expect(mirror.result?.outcome).toBe('error');
    const again = strictMirror(shared);
    again.runStart('hi');
    expect(await again.modelCallStart(bound)).toBeUndefined();
    again.runAborted();
    expect(shared.held).toBe(0);
    expect(shared.usage.costUsd).toBe(1);
  });

  it('refuses a call with no bound under a strict cap, in Error, naming what is missing', async () => {
    const mirror = strictMirror(new Budget({ maxCostUsd: 1, strict: true }));
    mirror.runStart('hi');
    const stop = await mirror.modelCallStart();
    expect(stop).toBeInstanceOf(OperationError);
    expect(stop?.message).toMatch(/strict maxCostUsd needs the bound of each model call.*no call is made/);
    expect(mirror.result?.outcome).toBe('error');
    expect(mirror.usage.llmCalls).toBe(0);
    expect(validateHistory(mirror.machine.history()).ok).toBe(true);
  });

  it('refuses a bounded call it cannot price under a strict cap (no pricing), never holding $0', async () => {
    const mirror = new StepMirror({ logger: false, budget: { maxCostUsd: 1, strict: true } });
    mirror.runStart('hi');
    const stop = await mirror.modelCallStart(bound);
    expect(stop?.message).toMatch(/cannot hold the worst case.*no pricing option is set/);
    expect(mirror.result?.outcome).toBe('error');
  });

  it('throws on a malformed bound, naming it', async () => {
    const mirror = strictMirror(new Budget({ maxCostUsd: 1, strict: true }));
    await expect(mirror.modelCallStart({ inputTokens: -1, maxOutputTokens: 10 })).rejects.toThrow(InvalidArgumentError);
    await expect(mirror.modelCallStart({ inputTokens: 1 } as never)).rejects.toThrow(/maxOutputTokens/);
  });

  it('gives the worst case to an external budget that caps dollars, and releases it with the next charge', async () => {
    const reserves: unknown[] = [];
    const releases: unknown[] = [];
    const external: ExternalBudget = {
      capsCost: true,
      reserve: async (_kind, hold) => {
        reserves.push(hold);
        return undefined;
      },
      charge: async (_delta, release) => {
        releases.push(release);
        return undefined;
      },
    };
    const mirror = new StepMirror({ logger: false, pricing, externalBudgets: [external] });
    mirror.runStart('hi');
    expect(await mirror.modelCallStart(bound)).toBeUndefined();
    mirror.modelResponse({ text: 'done', usage: { inputTokens: 10, outputTokens: 10 } });
    mirror.runEnd();
    await mirror.modelCallStart(bound).catch(() => undefined);
    expect(reserves[0]).toEqual({ costUsd: 0.5 });
    expect(releases).toContainEqual({ costUsd: 0.5 });
  });

  it('without a strict cap, a call with no bound goes ahead as before', async () => {
    const mirror = new StepMirror({ logger: false, pricing, budget: { maxCostUsd: 1, strict: false } });
    mirror.runStart('hi');
    expect(await mirror.modelCallStart()).toBeUndefined();
  });
});
