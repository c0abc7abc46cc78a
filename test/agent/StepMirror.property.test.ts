import fc from 'fast-check';
import type { LLMCallBound } from '../../lib/agent/AgentLoop';
import { Budget } from '../../lib/agent/money/Budget';
import { StepMirror } from '../../lib/agent/StepMirror';
import { validateHistory } from '../../lib/history/validateHistory';
import { manualClock } from '../helpers/manualClock';

/** What a framework does at one step of its loop, drawn at random. */
interface StepScript {
  /** Failed attempts before the answer; the last may be given up on. */
  failures: number;
  giveUp: boolean;
  tools: Array<{ outcome: 'ok' | 'error' | 'throws'; endOrder: number }>;
  /** Cancel the run: 0 never, 1 before the model call, 2 after the response, 3 while tools run. */
  cancelAt: 0 | 1 | 2 | 3;
  /** The loop's stop condition ends it after this step's tools. */
  stopAfter: boolean;
}

interface RunScript {
  steps: StepScript[];
  /** How the run's end is reported, when the loop ran out of steps: normally, as an abort, or as a failure. */
  end: 'end' | 'aborted' | 'failed';
  budget: { maxLlmCalls?: number; maxToolCalls?: number; maxCostUsd?: number };
  costUsd: number;
}

const stepArb: fc.Arbitrary<StepScript> = fc.record({
  failures: fc.nat({ max: 2 }),
  giveUp: fc.boolean(),
  tools: fc.array(
    fc.record({ outcome: fc.constantFrom('ok' as const, 'error' as const, 'throws' as const), endOrder: fc.nat(9) }),
    { maxLength: 3 },
  ),
  cancelAt: fc.constantFrom(0 as const, 0 as const, 0 as const, 1 as const, 2 as const, 3 as const),
  stopAfter: fc.boolean(),
});

const runArb: fc.Arbitrary<RunScript> = fc.record({
  steps: fc.array(stepArb, { minLength: 1, maxLength: 5 }),
  end: fc.constantFrom('end' as const, 'aborted' as const, 'failed' as const),
  budget: fc.record(
    { maxLlmCalls: fc.nat(6), maxToolCalls: fc.nat(6), maxCostUsd: fc.constantFrom(0.01, 0.05, 0.2) },
    { requiredKeys: [] },
  ),
  costUsd: fc.constantFrom(0, 0.01, 0.03),
});

/**
 * Feeds the mirror what a framework loop following `script` would report, honouring the mirror's
 * answers the framework's way: a refused model call rejects the loop, a refused tool call is the
 * call's error result, and an aborted signal stops the loop.
 */
async function drive(mirror: StepMirror, script: RunScript, turn: number, bound?: LLMCallBound): Promise<void> {
  mirror.runStart(`run ${turn}`);
  let n = 0;
  for (const step of script.steps) {
    if (step.cancelAt === 1) mirror.cancel('cancel before the call');
    let answered = false;
    for (let attempt = 0; attempt <= step.failures; attempt++) {
      const stop = await mirror.modelCallStart(bound);
      if (stop !== undefined) {
        mirror.runFailed(stop);
        return;
      }
      if (attempt < step.failures) {
        const last = step.giveUp && attempt === step.failures - 1;
        mirror.modelCallFailed(new Error(`attempt ${attempt + 1} failed`), { willRetry: !last });
        if (last) {
          mirror.runFailed(new Error('the SDK gave up'));
          return;
        }
        continue;
      }
      answered = true;
    }
    if (!answered) return;
    const calls = step.tools.map((_, i) => ({ id: `t${turn}-${n}-${i}`, name: `tool${i}`, input: { i } }));
    n += 1;
    mirror.modelResponse({
      text: calls.length === 0 ? 'done' : 'working',
      toolCalls: calls.length === 0 ? undefined : calls,
      usage: { inputTokens: 10, outputTokens: 5, costUsd: script.costUsd },
      model: 'm',
    });
    if (step.cancelAt === 2) mirror.cancel('cancel after the response');
    if (calls.length === 0) break;
    // The framework starts every call of the step (in parallel), then they end in any order.
    const started: boolean[] = [];
    for (const c of calls) started.push((await mirror.toolStart(c)) === undefined);
    if (step.cancelAt === 3) mirror.cancel('cancel mid-tool');
    const order = calls.map((c, i) => ({ c, i })).sort((a, b) => step.tools[a.i]!.endOrder - step.tools[b.i]!.endOrder);
    for (const { c, i } of order) {
      if (!started[i]) continue;
      const outcome = step.tools[i]!.outcome;
      if (outcome === 'throws') mirror.toolEnd(c.id, { error: new Error('tool threw') });
      else mirror.toolEnd(c.id, { output: outcome, isError: outcome === 'error' });
    }
    mirror.stepEnd();
    if (!mirror.running) return;
    if (mirror.signal.aborted) {
      mirror.runAborted();
      return;
    }
    if (step.stopAfter || mirror.spent() !== undefined) break;
  }
  if (!mirror.running) return;
  if (script.end === 'end') mirror.runEnd();
  else if (script.end === 'aborted') mirror.runAborted('the framework aborted');
  else mirror.runFailed(new Error('the framework failed'));
}

describe('StepMirror (property)', () => {
  it('any legal framework order, with failures, retries, refusals and aborts, leaves a valid history', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(runArb, { minLength: 1, maxLength: 3 }), async (runs) => {
        const clock = manualClock();
        const rejected: unknown[] = [];
        const mirror = new StepMirror({ clock: clock.now, logger: false, budget: runs[0]!.budget });
        mirror.machine.on('rejected', (e) => rejected.push(e));
        for (const [i, run] of runs.entries()) {
          await drive(mirror, run, i + 1);
          clock.advance(5);
          expect(mirror.running).toBe(false);
          expect(mirror.result?.turn).toBe(i + 1);
          expect(mirror.machine.table.states[mirror.machine.current]?.isTerminal).toBe(true);
        }
        const verdict = validateHistory(mirror.machine.history());
        expect(verdict.issues).toEqual([]);
        expect(rejected).toEqual([]);
        // Every move the table lacks is forced with a reason.
        for (const r of mirror.machine.history()) if (r.forced === true) expect(r.description.trim()).not.toBe('');
      }),
      { numRuns: 300 },
    );
  });

  it('under a strict shared cap, spend never passes it, every hold is released, and the history stays valid', async () => {
    // A bound of 10 + 5 tokens at $0.002 a token holds $0.03, at least any response below costs.
    const bound: LLMCallBound = { inputTokens: 10, maxOutputTokens: 5, model: 'm' };
    await fc.assert(
      fc.asyncProperty(
        fc.array(runArb, { minLength: 1, maxLength: 3 }),
        fc.constantFrom(0.02, 0.05, 0.1),
        async (runs, cap) => {
          const clock = manualClock();
          const shared = new Budget({ maxCostUsd: cap, strict: true });
          const mirror = new StepMirror({
            clock: clock.now,
            logger: false,
            sharedBudgets: [shared],
            pricing: (u) => ((u.inputTokens ?? 0) + (u.outputTokens ?? 0)) * 0.002,
          });
          for (const [i, run] of runs.entries()) {
            await drive(mirror, run, i + 1, bound);
            clock.advance(5);
            expect(mirror.running).toBe(false);
            expect(shared.held).toBe(0);
          }
          expect(shared.usage.costUsd).toBeLessThanOrEqual(cap + 1e-12);
          expect(validateHistory(mirror.machine.history()).issues).toEqual([]);
        },
      ),
      { numRuns: 200 },
    );
  });
});
