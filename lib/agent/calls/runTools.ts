import { messageOf } from '../../internal/messageOf';
import type { ToolCall, ToolResult } from '../AgentLoop';
import type { SpentLimit } from '../BudgetLimits';
import type { ToolCallEvent } from '../AgentEvents';
import { toolResultProblem } from '../turn/checkAgentOutput';
import { ContractViolationError, OperationError } from '../TurnError';
import type { TurnScope } from '../turn/TurnScope';
import type { UsageDelta } from '../UsageTotals';
import { chargeServed } from './serveRecorded';
import { budgetedHook } from './budgetedLLM';

/** One tool call of a response, from the moment the LLM asked for it until it is answered. */
export interface ToolSlot {
  call: ToolCall;
  status: ToolCallEvent['status'] | 'running' | 'pending';
  startedAt: number;
  endedAt: number;
  result?: ToolResult;
  note?: string;
}

/** One line per call, as the record after the tools keeps it. */
export interface ToolSummary {
  callId: string;
  name: string;
  isError: boolean;
  ms: number;
  note?: string;
}

/** How the tools of one response ended: all answered, or the turn must end (`error` says why). */
export type ToolsOutcome =
  | { kind: 'done'; results: ToolResult[]; summary: ToolSummary[] }
  /** A tool's LLM call (through `ctx.llm`) was refused by the budgets: the turn ends `budget_exceeded`. */
  | { kind: 'budget'; spent: SpentLimit; summary: ToolSummary[] }
  | { kind: 'failed'; error: OperationError | ContractViolationError; data: Record<string, unknown> };

/** Charged when a call starts; budgets only read a delta. */
const ONE_TOOL_CALL: UsageDelta = Object.freeze({ toolCalls: 1 });

/**
 * Runs a response's tool calls, up to `toolConcurrency` at once, results in call order. The
 * budgets are checked before each call starts, and each call is counted then, before any
 * await, so concurrent calls never pass `maxToolCalls`. A tool that throws answers with an
 * error result, as every agent framework does: the LLM sees the failure and decides. Once the
 * turn is aborted no call starts; the running ones get their grace. Every slot ends answered.
 */
export function runTools(scope: TurnScope, slots: ToolSlot[]): Promise<ToolsOutcome> {
  return new ToolRound(scope, slots).run();
}

/** The tools of one response as they run. */
class ToolRound {
  readonly #scope: TurnScope;
  readonly #slots: ToolSlot[];
  /** The run's budgets, for the LLM calls tools make: one handle for the response's tools. */
  readonly #hook: ReturnType<typeof budgetedHook>;
  #next = 0;
  #stop: string | undefined;
  #violation: ContractViolationError | undefined;
  #failed: OperationError | undefined;

  constructor(scope: TurnScope, slots: ToolSlot[]) {
    this.#scope = scope;
    this.#slots = slots;
    this.#hook = budgetedHook(scope, 'runTool');
  }

  async run(): Promise<ToolsOutcome> {
    const scope = this.#scope;
    const slots = this.#slots;
    const { settings: s, signal } = scope;
    // Calls answered before they could run (denied by a person) are reported as they are.
    for (const slot of slots) if (slot.result !== undefined) reportTool(scope, slot, false);
    // Resuming: calls of a response served from the journal are answered from it, or run, by the tool policy.
    if (s.recording !== undefined) answerRecorded(scope, slots);
    this.#skipAnswered();
    const width = Math.min(s.toolConcurrency, slots.length);
    if (width <= 1) await this.#work();
    else await Promise.all(Array.from({ length: width }, () => this.#work()));

    const failed = this.#failed;
    const violation = this.#violation;
    for (const slot of slots) {
      if (slot.result !== undefined) continue;
      const why =
        this.#stop ??
        (signal.aborted
          ? `interrupted: ${scope.reason()}`
          : `not run: ${failed?.message ?? violation?.problem ?? 'the turn ended'}`);
      answer(slot, why.startsWith('interrupted') ? 'interrupted' : 'not_run', why);
      slot.startedAt = slot.endedAt = s.clock();
      reportTool(scope, slot, false);
    }
    if (failed !== undefined) return { kind: 'failed', error: failed, data: { operation: 'runTool' } };
    if (violation !== undefined)
      return { kind: 'failed', error: violation, data: { operation: violation.operation, problem: violation.problem } };
    const summary = slots.map((slot) => {
      const line: ToolSummary = {
        callId: slot.call.id,
        name: slot.call.name,
        isError: slot.result!.isError === true,
        ms: Math.max(0, slot.endedAt - slot.startedAt),
      };
      if (slot.note !== undefined && slot.status !== 'ok') line.note = slot.note;
      return line;
    });
    const hook = this.#hook;
    if (hook.spent !== undefined) return { kind: 'budget', spent: hook.spent, summary };
    return { kind: 'done', results: slots.map((slot) => slot.result!), summary };
  }

  /** Moves `next` past the calls answered already. */
  #skipAnswered(): void {
    const slots = this.#slots;
    while (this.#next < slots.length && slots[this.#next]!.result !== undefined) this.#next += 1;
  }

  /** One of up to `toolConcurrency` workers: takes the next call until none is left or the turn must end. */
  async #work(): Promise<void> {
    const scope = this.#scope;
    const slots = this.#slots;
    const hook = this.#hook;
    const { settings: s, meter, signal } = scope;
    while (
      this.#next < slots.length &&
      this.#stop === undefined &&
      this.#violation === undefined &&
      this.#failed === undefined
    ) {
      if (signal.aborted) return;
      const spent = meter.spent() ?? (meter.hasExternal ? await meter.reserve('tool') : undefined);
      if (spent instanceof OperationError) {
        this.#failed = spent;
        return;
      }
      if (spent !== undefined) {
        this.#stop = `not run: ${spent.message}`;
        return;
      }
      this.#skipAnswered();
      if (signal.aborted || this.#next >= slots.length) return;
      const slot = slots[this.#next++]!;
      if (slot.result !== undefined) continue;
      meter.charge(ONE_TOOL_CALL, false);
      slot.status = 'running';
      // The meter has just read the clock, unless an external budget was awaited since.
      slot.startedAt = meter.hasExternal ? s.clock() : meter.lastReading;
      const settled = await scope.settleHook((ctx) => s.agent.runTool(slot.call, ctx), hook.llm);
      // A tool's LLM call the budgets refused: no further tool starts.
      if (hook.spent !== undefined) this.#stop ??= `not run: ${hook.spent.message}`;
      slot.endedAt = Math.max(slot.startedAt, s.clock());
      if (settled.kind === 'abandoned') {
        answer(
          slot,
          'interrupted',
          `interrupted: ${scope.reason()} (the tool did not stop within ${s.cancelGraceMs} ms)`,
        );
      } else if (settled.kind === 'threw') {
        if (signal.aborted) answer(slot, 'interrupted', `interrupted: ${scope.reason()}`);
        else answer(slot, 'error', messageOf(settled.error));
      } else {
        const problem = toolResultProblem(settled.value, slot.call);
        if (problem !== undefined) {
          this.#violation ??= new ContractViolationError(`runTool(${slot.call.name})`, problem, settled.value);
          answer(slot, 'interrupted', `interrupted: runTool broke its contract: ${problem}`);
        } else {
          slot.result = settled.value;
          slot.status = settled.value.isError === true ? 'error' : 'ok';
        }
      }
      reportTool(scope, slot, false);
    }
  }
}

/** A call answered: its journal line, and the `toolCall` event to those who listen. */
function reportTool(scope: TurnScope, slot: ToolSlot, fromJournal: boolean): void {
  const s = scope.settings;
  const listened = s.hears('toolCall');
  if (s.journal === undefined && !listened) return;
  const event: ToolCallEvent = {
    turn: scope.turn,
    call: slot.call,
    status: slot.status as ToolCallEvent['status'],
    startedAt: slot.startedAt,
    endedAt: slot.endedAt,
    result: slot.result!,
  };
  s.journal?.(fromJournal ? { type: 'tool', ...event, fromJournal: true } : { type: 'tool', ...event });
  if (listened) s.emit('toolCall', event);
}

/**
 * The calls of a response served from the journal, answered by their plan (the tool policy):
 * a journaled result is served (counted in the agent's own budget alone, as it was paid for
 * before), a call cut off while running is answered as interrupted; the rest are left to run.
 */
function answerRecorded(scope: TurnScope, slots: ToolSlot[]): void {
  const { settings: s, meter } = scope;
  const recording = s.recording!;
  for (const slot of slots) {
    if (slot.result !== undefined) continue;
    const plan = recording.toolPlan(slot.call);
    if (plan.kind === 'run') continue;
    slot.startedAt = slot.endedAt = s.clock();
    if (plan.kind === 'serve') {
      slot.status = plan.status;
      slot.result = plan.result;
      chargeServed(meter, recording, ONE_TOOL_CALL);
      reportTool(scope, slot, true);
    } else {
      answer(slot, 'interrupted', plan.note);
      reportTool(scope, slot, false);
    }
  }
}

/** Answers a slot with an error result that says why. */
function answer(slot: ToolSlot, status: ToolSlot['status'], note: string): void {
  slot.status = status;
  slot.note = note;
  slot.result = { callId: slot.call.id, output: note, isError: true };
}
