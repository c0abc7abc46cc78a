import fc from 'fast-check';
import { AgentWithStateMachine } from '../../lib/agent/AgentWithStateMachine';
import { createScriptedAgent, type ScriptedReply } from '../../lib/agent/createScriptedAgent';
import type { ToolCall } from '../../lib/agent/AgentLoop';
import type { ExternalBudget } from '../../lib/agent/money/ExternalBudget';
import type { TurnResult } from '../../lib/agent/TurnResult';
import { StepMirror } from '../../lib/agent/StepMirror';
import { STALL_EXTENSION, WRAP_UP_EXTENSION } from '../../lib/agent/extensionStates';
import { extendTable } from '../../lib/machine/extendTable';
import { DEFAULT_TABLE } from '../../lib/machine/transitions';

// One turn, two drivers: the adapter calls a scripted loop; the mirror hears a framework's
// events for the same run. Fed the same random script (retries, a call given up, tool errors
// and throws, several tools a response, responses past their bound, call caps that stop the run, an external budget that
// holds each call's worst case and refuses one, `budget.wrapUp`'s final call), both write the same history, record for record
// and journal line for journal line, under the same clock, ask and charge the external budget
// the same, and hand back the same result (its text, error, usage, moves, calls left unanswered).

interface Step {
  /** Failed attempts before the answer. */
  failures: number;
  tools: Array<'ok' | 'error' | 'throws'>;
  /** The response reports more input tokens than its bound holds: a `boundExceeded` fact, a strict cap's stop. */
  past: boolean;
  /** The response reports a bad number (NaN output tokens): refused where a cap reads usage, else charged by its valid fields and noted. */
  bad: boolean;
}
interface Script {
  steps: Step[];
  retries: number;
  budget: { maxLlmCalls?: number; maxToolCalls?: number; maxCostUsd?: number };
  /** The stall detectors on (the same tool with the same input k times, …). */
  stall: boolean;
  /** Cancel the run while tool `cancelAt` (counted over the run) runs; -1 never. */
  cancelAt: number;
  /** An external budget (a batch's in Redis, say) that caps dollars and refuses the LLM call after `outsideCalls`; -1: none. */
  outsideCalls: number;
  /** `budget.wrapUp` (with a dollar cap): the call that would not fit beside the final call's hold becomes the final call. */
  wrapUp: boolean;
}

const scripts: fc.Arbitrary<Script> = fc.record({
  steps: fc.array(
    fc.record({
      failures: fc.nat({ max: 2 }),
      tools: fc.array(fc.constantFrom('ok' as const, 'error' as const, 'throws' as const), { maxLength: 3 }),
      past: fc.boolean(),
      bad: fc.boolean(),
    }),
    { minLength: 1, maxLength: 4 },
  ),
  retries: fc.nat({ max: 2 }),
  budget: fc.record(
    { maxLlmCalls: fc.nat(6), maxToolCalls: fc.nat(6), maxCostUsd: fc.constantFrom(0.0005, 0.002, 0.004, 0.05) },
    { requiredKeys: [] },
  ),
  stall: fc.boolean(),
  cancelAt: fc.integer({ min: -1, max: 4 }),
  outsideCalls: fc.integer({ min: -1, max: 5 }),
  wrapUp: fc.boolean(),
});

/** What a step's response reports: within its bound or past it, and with a bad number or not. */
function usageOf(step: Step): { inputTokens: number; outputTokens: number } {
  const usage = step.past ? PAST : USAGE;
  return step.bad ? { ...usage, outputTokens: Number.NaN } : usage;
}

/** The script's budget as both drivers take it: `wrapUp` only beside a dollar cap. */
function budgetOf(script: Script): Script['budget'] & { wrapUp?: true } {
  return script.wrapUp && script.budget.maxCostUsd !== undefined ? { ...script.budget, wrapUp: true } : script.budget;
}

/** The answer to a final call, on both drivers. */
const FINAL = { text: 'wrapped', usage: { inputTokens: 12, outputTokens: 6 } };

/**
 * An external budget that caps dollars, holds each LLM call's worst case and refuses the call
 * after `calls` of them: what it was asked and charged goes in the lines compared, after the run.
 */
function outside(calls: number, holdsWrapUp: boolean): { budget: ExternalBudget; said: () => string } {
  let llmCalls = 0;
  let toolCalls = 0;
  let held = 0;
  let costUsd = 0;
  const reserves: unknown[] = [];
  const budget: ExternalBudget = {
    capsCost: true,
    // Beside `budget.wrapUp`: it takes the final-call holds it is given (`hold.wrapUp`, in the lines compared).
    ...(holdsWrapUp && { holdsWrapUp }),
    reserve: async (kind, hold) => {
      if (kind === 'tool') return void (toolCalls += 1);
      reserves.push(hold);
      if (llmCalls >= calls)
        return {
          limit: 'maxLlmCalls',
          used: llmCalls,
          max: calls,
          message: `outside: ${llmCalls} of ${calls} LLM calls`,
        };
      llmCalls += 1;
      held += hold?.costUsd ?? 0;
      return undefined;
    },
    charge: async (delta, release) => {
      costUsd += delta.costUsd ?? 0;
      held -= release?.costUsd ?? 0;
      return undefined;
    },
  };
  const said = (): string =>
    `outside ${JSON.stringify({ llmCalls, toolCalls, held: held.toFixed(9), costUsd: costUsd.toFixed(9), reserves })}`;
  return { budget, said };
}

// $1 per million tokens in, $4 out: a call's worst case (the bound) is $0.0003, a response $0.00003.
const pricing = (u: { inputTokens?: number; outputTokens?: number }): number =>
  (u.inputTokens ?? 0) * 1e-6 + (u.outputTokens ?? 0) * 4e-6;

const USAGE = { inputTokens: 10, outputTokens: 5 };
/** Input past the bound's 100 tokens (a server that counts more than the request holds). */
const PAST = { inputTokens: 150, outputTokens: 5 };
const clock = (): number => 1000;
const bound = { inputTokens: 100, maxOutputTokens: 50, model: 'm' };

/** The number over the run of tool call `id` (`c<step>-<index>`). */
function toolNumber(script: Script, id: string): number {
  const [s, i] = id.slice(1).split('-').map(Number) as [number, number];
  let n = 0;
  for (let k = 0; k < s; k++) n += callsOf(script, k).length;
  return n + i;
}

/** The tool calls of step `s` (the last step answers in text). */
function callsOf(script: Script, s: number): ToolCall[] {
  if (s === script.steps.length - 1) return [];
  return script.steps[s]!.tools.map((_, i) => ({ id: `c${s}-${i}`, name: `tool${i}`, input: { s, i } }));
}

function outcomeOf(script: Script, id: string): 'ok' | 'error' | 'throws' {
  const [s, i] = id.slice(1).split('-').map(Number) as [number, number];
  return script.steps[s]!.tools[i]!;
}

function capture(): { lines: string[]; sink: { write(e: unknown): void; journal(j: unknown): void } } {
  const lines: string[] = [];
  return {
    lines,
    sink: {
      write: (e) => void lines.push(JSON.stringify(e)),
      journal: (j) => void lines.push(`journal ${JSON.stringify(j)}`),
    },
  };
}

/** A run's result as its caller reads it (the error by class and message), as a line to compare. */
function resultLine(result: TurnResult | undefined): string {
  if (result === undefined) return 'result none';
  const { error, ...rest } = result;
  return `result ${JSON.stringify({ ...rest, ...(error && { error: `${error.name}: ${error.message}` }) })}`;
}

async function byAdapter(script: Script): Promise<string[]> {
  const replies: ScriptedReply[] = [];
  script.steps.forEach((step, s) => {
    for (let f = 0; f < step.failures; f++) replies.push({ error: `attempt ${f + 1} failed` });
    const calls = callsOf(script, s);
    const usage = usageOf(step);
    replies.push(calls.length === 0 ? { text: 'done', usage } : { text: 'working', toolCalls: calls, usage });
  });
  let adapter: AgentWithStateMachine | undefined;
  const tool = (call: ToolCall) => {
    if (toolNumber(script, call.id) === script.cancelAt) adapter!.cancel('cancelled mid-tool');
    const outcome = outcomeOf(script, call.id);
    if (outcome === 'throws') throw new Error('tool threw');
    return { callId: call.id, output: outcome, ...(outcome === 'error' && { isError: true }) };
  };
  const agent = createScriptedAgent({
    replies,
    bound,
    finalReply: FINAL,
    tools: { tool0: tool, tool1: tool, tool2: tool },
  });
  const out = capture();
  const ext = script.outsideCalls < 0 ? undefined : outside(script.outsideCalls, budgetOf(script).wrapUp === true);
  adapter = new AgentWithStateMachine(agent, {
    ...(ext && { externalBudgets: [ext.budget] }),
    logger: false,
    pricing,
    // A framework's loop cannot be nudged: the mirror's policy is `stop`, so the adapter's is too.
    stall: script.stall && { policy: 'stop' },
    ...(script.stall ? { table: extendTable(extendTable(DEFAULT_TABLE, STALL_EXTENSION), WRAP_UP_EXTENSION) } : {}),
    sink: out.sink,
    clock,
    journal: true,
    budget: budgetOf(script),
    retry: { retries: script.retries, baseDelayMs: 0, maxDelayMs: 0, shouldRetry: () => true },
    sleep: async () => undefined,
  });
  const result = await adapter.runTurn('go');
  if (ext !== undefined) out.lines.push(ext.said());
  out.lines.push(resultLine(result));
  return out.lines;
}

async function byMirror(script: Script): Promise<string[]> {
  const out = capture();
  const ext = script.outsideCalls < 0 ? undefined : outside(script.outsideCalls, budgetOf(script).wrapUp === true);
  const mirror = new StepMirror({
    ...(ext && { externalBudgets: [ext.budget] }),
    logger: false,
    pricing,
    stall: script.stall,
    sink: out.sink,
    clock,
    journal: true,
    budget: budgetOf(script),
    // The framework makes the final call the budget asks for, as the scripted loop does.
    honours: { wrapUp: true },
  });
  await mirrored(script, mirror);
  // The mirror charges outside budgets off the run's path, at its end: let that settle.
  await new Promise((resolve) => setImmediate(resolve));
  if (ext !== undefined) out.lines.push(ext.said());
  out.lines.push(resultLine(mirror.result));
  return out.lines;
}

/** The framework's events for `script`'s run, until the run ends. */
async function mirrored(script: Script, mirror: StepMirror): Promise<void> {
  mirror.runStart('go');
  for (const [s, step] of script.steps.entries()) {
    let answered = false;
    for (let attempt = 0; attempt <= step.failures; attempt++) {
      const plan = await mirror.modelCallPlan(() => bound);
      if (plan instanceof Error) return void mirror.runFailed(plan);
      // The final call: no tools, the scripted loop's final reply (it fails no attempt); the run ends wrapped up with it.
      if (plan.wrapUp !== undefined) return void mirror.modelResponse(FINAL);
      if (attempt < step.failures) {
        const willRetry = attempt < script.retries;
        mirror.modelCallFailed(new Error(`attempt ${attempt + 1} failed`), { willRetry, delayMs: 0 });
        if (!willRetry) return;
        continue;
      }
      answered = true;
    }
    if (!answered) return;
    const calls = callsOf(script, s);
    const usage = usageOf(step);
    mirror.modelResponse(calls.length === 0 ? { text: 'done', usage } : { text: 'working', toolCalls: calls, usage });
    if (!mirror.running) return;
    if (calls.length === 0) break;
    for (const call of calls) {
      // A refused call is answered by the mirror: the framework takes the refusal as its result.
      if ((await mirror.toolStart(call)) !== undefined) continue;
      if (toolNumber(script, call.id) === script.cancelAt) mirror.cancel('cancelled mid-tool');
      const outcome = outcomeOf(script, call.id);
      mirror.toolEnd(
        call.id,
        outcome === 'throws' ? { error: new Error('tool threw') } : { output: outcome, isError: outcome === 'error' },
      );
    }
    mirror.stepEnd();
    if (!mirror.running) return;
  }
  if (mirror.running) mirror.runEnd();
}

describe('the adapter and the mirror write the same history for the same run (property)', () => {
  it('record for record, journal line for journal line, and the same result', async () => {
    const outcomes = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(scripts, async (script) => {
        const adapter = await byAdapter(script);
        expect(await byMirror(script)).toEqual(adapter);
        const outcome = /"outcome":"(\w+)"/.exec(adapter[adapter.length - 1]!)?.[1] ?? 'none';
        outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
      }),
      { numRuns: 200, seed: 20261128 },
    );
    // The scripts reach every ending compared, the final call's among them.
    for (const outcome of ['end_of_turn', 'error', 'budget_exceeded', 'cancelled', 'wrapped_up'])
      expect(outcomes.get(outcome)).toBeGreaterThan(0);
  });
});

describe("a framework's retry wait", () => {
  it('goes in the failure record as the adapter puts its own; a wait that is no number of ms is refused by name', async () => {
    const out = capture();
    const mirror = new StepMirror({ logger: false, sink: out.sink, clock });
    mirror.runStart('go');
    await mirror.modelCallStart();
    expect(() => mirror.modelCallFailed(new Error('429'), { willRetry: true, delayMs: -1 })).toThrow(
      'Expected `modelCallFailed(error, { delayMs })` to be a non-negative finite number, got `-1` (number)',
    );
    mirror.modelCallFailed(new Error('429'), { willRetry: true, delayMs: 250 });
    await mirror.modelCallStart();
    mirror.modelResponse({ text: 'done', usage: USAGE });
    expect(out.lines.find((l) => l.includes('"LLM responded"'))).toContain(
      '"failures":[{"attempt":1,"error":"429","delayMs":250}]',
    );
  });
});
