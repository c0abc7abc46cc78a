import { Budget } from '../../lib/agent/money/Budget';
import type { SpentLimit } from '../../lib/agent/BudgetLimits';
import type { ExternalBudget } from '../../lib/agent/money/ExternalBudget';
import { OperationError } from '../../lib/agent/TurnError';
import { UsageMeter } from '../../lib/agent/money/UsageMeter';
import type { UsageDelta } from '../../lib/agent/UsageTotals';
import { InvalidArgumentError } from '../../lib/machine/InvalidArgumentError';
import { manualClock } from '../helpers/manualClock';

const DAY = 24 * 60 * 60 * 1000;

/** An external budget that records what it is asked and answers from a script. */
function recordingExternal(
  answers: { reserve?: SpentLimit; chargeFails?: string } = {},
): ExternalBudget & { charged: UsageDelta[]; reserved: string[] } {
  const charged: UsageDelta[] = [];
  const reserved: string[] = [];
  return {
    charged,
    reserved,
    reserve: (kind) => (reserved.push(kind), Promise.resolve(answers.reserve)),
    charge: (delta) => {
      if (answers.chargeFails !== undefined) return Promise.reject(new Error(answers.chargeFails));
      charged.push(delta);
      return Promise.resolve(undefined);
    },
  };
}

describe('UsageMeter', () => {
  afterEach(() => jest.useRealTimers());

  it('.charge() charges every budget and its own usage; .spent() reports the first spent limit in budget order', () => {
    const own = new Budget({ maxLlmCalls: 5 });
    const pool = new Budget({ maxTokens: 100 }, { label: 'shared budget' });
    const meter = new UsageMeter({ budgets: [own, pool], clock: manualClock().now });
    meter.start();
    meter.charge({ llmCalls: 1, inputTokens: 60, outputTokens: 40 });
    expect(meter.usage).toMatchObject({ llmCalls: 1, inputTokens: 60, outputTokens: 40 });
    expect(own.usage.inputTokens).toBe(60);
    expect(meter.spent()?.message).toBe('shared budget exceeded: 100 tokens of 100 tokens after 1 LLM call');
  });

  it('.chargeWall() charges the time since the last reading, never a negative one', () => {
    const clock = manualClock();
    const own = new Budget();
    const meter = new UsageMeter({ budgets: [own], clock: clock.now });
    meter.start();
    clock.advance(250);
    meter.chargeWall();
    clock.advance(-100);
    meter.chargeWall();
    clock.advance(30);
    meter.chargeWall();
    expect(own.usage.wallMs).toBe(280);
    expect(meter.lastReading).toBe(clock.now());
  });

  it('keeps external usage due until .flush() or .reserve(), and call counts reach them only through reserve', async () => {
    const external = recordingExternal();
    const meter = new UsageMeter({ budgets: [new Budget()], external: [external], clock: manualClock().now });
    meter.start();
    meter.charge({ llmCalls: 1 }, false);
    meter.charge({ inputTokens: 10 });
    meter.charge({ outputTokens: 5, costUsd: 0.01 });
    expect(meter.externalDue).toBe(true);
    expect(external.charged).toEqual([]);
    expect(await meter.reserve('tool')).toBeUndefined();
    expect(external.charged).toEqual([{ inputTokens: 10, outputTokens: 5, costUsd: 0.01 }]);
    expect(external.reserved).toEqual(['tool']);
    expect(meter.externalDue).toBe(false);
  });

  it('.reserve() sends no charge for wall time alone: it rides with the next charge', async () => {
    const clock = manualClock();
    const external = recordingExternal();
    const meter = new UsageMeter({ budgets: [new Budget()], external: [external], clock: clock.now });
    meter.start();
    clock.advance(40);
    await meter.reserve('llm');
    expect(external.charged).toEqual([]);
    clock.advance(10);
    meter.charge({ inputTokens: 5 });
    await meter.reserve('tool');
    expect(external.charged).toEqual([{ wallMs: 50, inputTokens: 5 }]);
  });

  it('remembers a limit an external budget reported spent', async () => {
    const spent: SpentLimit = {
      limit: 'maxLlmCalls',
      used: 3,
      max: 3,
      message: 'shared budget exceeded: 3 LLM calls of 3 after 3 LLM calls',
    };
    const meter = new UsageMeter({
      budgets: [new Budget()],
      external: [recordingExternal({ reserve: spent })],
      clock: manualClock().now,
    });
    meter.start();
    expect(await meter.reserve('llm')).toBe(spent);
    expect(meter.spent()).toBe(spent);
  });

  it('names the external budget that failed, and does not throw', async () => {
    const meter = new UsageMeter({
      budgets: [new Budget()],
      external: [recordingExternal(), recordingExternal({ chargeFails: 'READONLY' })],
      clock: manualClock().now,
    });
    meter.start();
    meter.charge({ inputTokens: 1 });
    const failed = await meter.flush();
    expect(failed).toBeInstanceOf(OperationError);
    expect((failed as OperationError).message).toBe('externalBudgets[1].charge failed: READONLY');
  });

  describe('the deadline', () => {
    it('calls onDeadline once when the earliest maxWallMs passes, with the spent limit', () => {
      jest.useFakeTimers();
      const clock = manualClock();
      const seen: SpentLimit[] = [];
      const meter = new UsageMeter({
        budgets: [new Budget({ maxWallMs: 5000 }), new Budget({ maxWallMs: 2000 }, { label: 'turn budget' })],
        clock: clock.now,
        onDeadline: (s) => seen.push(s),
      });
      meter.start();
      clock.advance(1999);
      jest.advanceTimersByTime(1999);
      expect(seen).toEqual([]);
      clock.advance(1);
      jest.advanceTimersByTime(1);
      expect(seen).toEqual([
        {
          limit: 'maxWallMs',
          used: 2000,
          max: 2000,
          message: 'turn budget exceeded: 2.0 s of wall time, of 2.0 s after 0 LLM calls',
        },
      ]);
      clock.advance(10_000);
      jest.advanceTimersByTime(10_000);
      expect(seen).toHaveLength(1);
    });

    it('looks again later when an injected clock has not reached the deadline when the timer fires', () => {
      jest.useFakeTimers();
      const clock = manualClock();
      const seen: SpentLimit[] = [];
      const meter = new UsageMeter({
        budgets: [new Budget({ maxWallMs: 1000 })],
        clock: clock.now,
        onDeadline: (s) => seen.push(s),
      });
      meter.start();
      jest.advanceTimersByTime(1000);
      expect(seen).toEqual([]);
      // Re-armed for what is left by the injected clock: 1,000 ms again.
      clock.advance(1000);
      jest.advanceTimersByTime(999);
      expect(seen).toEqual([]);
      jest.advanceTimersByTime(1);
      expect(seen.map((s) => s.limit)).toEqual(['maxWallMs']);
    });

    it('waits out a 30-day maxWallMs without a TimeoutOverflowWarning and without firing early', () => {
      jest.useFakeTimers();
      const warnings: string[] = [];
      const onWarning = (w: Error): number => warnings.push(w.name);
      process.on('warning', onWarning);
      try {
        const clock = manualClock();
        const seen: SpentLimit[] = [];
        const meter = new UsageMeter({
          budgets: [new Budget({ maxWallMs: 30 * DAY })],
          clock: clock.now,
          onDeadline: (s) => seen.push(s),
        });
        meter.start();
        // setTimeout's longest delay is 2^31 − 1 ms (~24.8 days): the meter clamps and looks again.
        clock.advance(2 ** 31 - 1);
        jest.advanceTimersByTime(2 ** 31 - 1);
        expect(seen).toEqual([]);
        clock.advance(30 * DAY - (2 ** 31 - 1));
        jest.advanceTimersByTime(30 * DAY - (2 ** 31 - 1));
        expect(seen.map((s) => s.used)).toEqual([30 * DAY]);
      } finally {
        process.off('warning', onWarning);
      }
      expect(warnings).toEqual([]);
    });

    it('.stop() disarms it', () => {
      jest.useFakeTimers();
      const clock = manualClock();
      const seen: SpentLimit[] = [];
      const meter = new UsageMeter({
        budgets: [new Budget({ maxWallMs: 10 })],
        clock: clock.now,
        onDeadline: (s) => seen.push(s),
      });
      meter.start();
      meter.stop();
      clock.advance(100);
      jest.advanceTimersByTime(100);
      expect(seen).toEqual([]);
    });
  });

  it('rejects bad options, naming them', () => {
    expect(() => new UsageMeter(undefined as never)).toThrow(InvalidArgumentError);
    expect(() => new UsageMeter({ budgets: [{}] as never })).toThrow('Expected `budgets` to be an array of Budget');
    expect(() => new UsageMeter({ budgets: [], external: 'redis' as never })).toThrow(
      'Expected `external` to be an array',
    );
    expect(() => new UsageMeter({ budgets: [], clock: 5 as never })).toThrow('Expected `clock` to be a function');
    expect(() => new UsageMeter({ budgets: [], onDeadline: true as never })).toThrow(
      'Expected `onDeadline` to be a function',
    );
  });
});
