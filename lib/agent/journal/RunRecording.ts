import type { LLMCallInput } from '../AgentEvents';
import type { LLMResponse, ToolCall, ToolResult } from '../AgentLoop';
import { recordedCallDiffers } from './recordedCallDiffers';
import { resolveResumeTools, type ResumeToolChoice } from './ResumeToolPolicy';
import { addUsage, emptyUsage, type UsageDelta, type UsageTotals } from '../UsageTotals';
import { USAGE_FIELD_NAMES } from '../../internal/fieldLists';
import { InvalidArgumentError } from '../../machine/InvalidArgumentError';

/** A journal line as a resume reads it (`loadHistory(file).journal` gives them). */
export interface RecordedLine {
  readonly type: string;
  readonly turn: number;
  readonly operation?: unknown;
  readonly attempt?: unknown;
  readonly input?: unknown;
  readonly response?: unknown;
  readonly costUsd?: unknown;
  readonly error?: unknown;
  readonly redactError?: unknown;
  readonly call?: { readonly id: string; readonly name: string; readonly input?: unknown };
  readonly status?: unknown;
  readonly result?: unknown;
  readonly json?: unknown;
}

/**
 * The adapter's and the mirror's `resumeFrom`: the journal of an interrupted run of this
 * conversation, and what that run spent. What its tool calls do is the option `resumeTools`.
 */
export interface ResumeFrom {
  /** The journal lines of the interrupted run's history file: `(await loadHistory(file)).journal`. */
  journal: readonly RecordedLine[];
  /**
   * What the interrupted run spent, as its file says (`runFacts(entries).finalUsage`): counted in
   * this agent's own usage (its `budget` sees it), never again in shared or external budgets,
   * which start from the files' spend. Default: the usage of the responses served.
   */
  usage?: UsageDelta;
}

/** How an agent given `resumeFrom` resumed: `agent.resumed`. */
export interface ResumeInfo {
  /**
   * `recovered`: the recorded responses are served to the loop's `acceptRecorded`, then the run
   * goes live; `restarted`: the loop has no `acceptRecorded` (or the journal no response), so
   * the run starts from the beginning, its earlier spend counted.
   */
  mode: 'recovered' | 'restarted';
  /** Why the run was restarted. */
  reason?: string;
  /** LLM responses served from the journal so far: no request was made for them. */
  recordedCalls: number;
  /** Tool calls answered with their journaled result, without running the tool (policy `serve`). */
  servedTools: number;
  /** Tool calls of the interrupted run run again, by the tool policy. */
  rerunTools: number;
  /** Tool calls that had started without a journaled result, answered as interrupted (policy `serve`). */
  interruptedTools: number;
  /** Why the journal stopped being served before its end: the run asked for a call other than the recorded one. */
  diverged?: string;
}

/** What a resumed run does with one tool call of a served response. */
export type RecordedToolPlan =
  | { kind: 'serve'; result: ToolResult; status: 'ok' | 'error'; json: boolean }
  | { kind: 'interrupted'; note: string }
  | { kind: 'run'; rerun: boolean };

interface Served {
  turn: number;
  operation: string;
  input: unknown;
  response: LLMResponse;
  costUsd: number | undefined;
}

/**
 * An interrupted run's journal, served to the run that resumes it: each recorded LLM response
 * in order (while the run asks for the same calls), then live. Tool calls of served responses
 * follow the tool policy. Tracks what the served part charged, so that the rest of the earlier
 * spend is charged once, when the run goes live. Internal: the adapter makes one for `resumeFrom`.
 */
export class RunRecording {
  readonly info: ResumeInfo;
  readonly #responses: Served[] = [];
  /** Journaled results by turn and call id, in order: an id a loop repeats across rounds has one per round. */
  readonly #tools = new Map<string, { result: ToolResult; status: 'ok' | 'error'; json: boolean }[]>();
  readonly #policy: (call: ToolCall) => ResumeToolChoice;
  readonly #earlier: UsageDelta | undefined;
  readonly #concurrency: number;
  #served: UsageTotals = emptyUsage();
  #next = 0;
  #live: boolean;
  #remainderCharged = false;
  /** The calls of the last response served, with their plans. */
  #plans = new Map<string, RecordedToolPlan>();

  constructor(
    from: ResumeFrom,
    canAccept: boolean,
    toolConcurrency: number,
    policy: (call: ToolCall) => ResumeToolChoice,
  ) {
    this.#policy = policy;
    this.#earlier = from.usage;
    this.#concurrency = toolConcurrency;
    for (const line of from.journal) {
      if (line.type === 'tool' && (line.status === 'ok' || line.status === 'error') && isResult(line.result)) {
        if (line.call !== undefined) {
          const k = key(line.turn, line.call.id);
          const list = this.#tools.get(k) ?? [];
          list.push({ result: line.result, status: line.status, json: line.json === true });
          this.#tools.set(k, list);
        }
      }
      if (line.type !== 'llm') continue;
      // A line the journal kept no content of cannot be served, nor anything after it.
      if (line.redactError !== undefined) break;
      if (line.error !== undefined || typeof line.response !== 'object' || line.response === null) continue;
      this.#responses.push({
        turn: line.turn,
        operation: String(line.operation),
        input: line.input,
        response: line.response as LLMResponse,
        costUsd: typeof line.costUsd === 'number' ? line.costUsd : undefined,
      });
    }
    const reason = !canAccept
      ? 'the agent loop has no acceptRecorded operation'
      : this.#responses.length === 0
        ? 'the journal holds no LLM response'
        : undefined;
    this.#live = reason !== undefined;
    this.info = {
      mode: reason === undefined ? 'recovered' : 'restarted',
      ...(reason === undefined ? {} : { reason }),
      recordedCalls: 0,
      servedTools: 0,
      rerunTools: 0,
      interruptedTools: 0,
    };
  }

  /** Whether the next LLM call may still be served from the journal: the run is re-driving recorded moves, which passed their budget checks. */
  get serving(): boolean {
    return !this.#live && this.#next < this.#responses.length;
  }

  /**
   * The recorded response for this call, or undefined once the run is live: the journal has no
   * further response, or this call differs from the recorded one (`info.diverged` says how).
   */
  take(operation: string, input: LLMCallInput): { response: LLMResponse; costUsd: number | undefined } | undefined {
    if (this.#live) return undefined;
    const entry = this.#responses[this.#next];
    if (entry === undefined) return this.#goLive(undefined);
    const difference = recordedCallDiffers(entry, operation, input);
    if (difference !== undefined) return this.#goLive(`at LLM call ${this.#next + 1}: ${difference}`);
    this.#next += 1;
    this.info.recordedCalls += 1;
    const response = structuredClone(entry.response);
    this.#plan(entry.turn, response.toolCalls ?? []);
    return { response, costUsd: entry.costUsd };
  }

  /** Serves no further response: the run makes its calls live from here (`why` goes in `info.diverged`). */
  stop(why?: string): void {
    if (this.serving) this.#goLive(why);
  }

  /** What to do with a tool call of the last served response; `run` (without `rerun`) for one the interrupted run never started. */
  toolPlan(call: ToolCall): RecordedToolPlan {
    const plan = this.#plans.get(call.id) ?? { kind: 'run', rerun: false };
    if (plan.kind === 'serve') this.info.servedTools += 1;
    else if (plan.kind === 'interrupted') this.info.interruptedTools += 1;
    else if (plan.rerun) this.info.rerunTools += 1;
    return plan;
  }

  /** Counts what the served part charged (a response, a served tool call). */
  served(delta: UsageDelta): void {
    this.#served = addUsage(this.#served, delta);
  }

  /**
   * The part of the earlier spend not yet charged (failed attempts, a call cut off in flight),
   * once, when the run no longer serves from the journal; otherwise undefined.
   */
  remainder(): UsageDelta | undefined {
    if (this.#remainderCharged || this.serving) return undefined;
    this.#remainderCharged = true;
    const earlier = this.#earlier;
    if (earlier === undefined) return undefined;
    const rest: UsageDelta = {};
    for (const k of USAGE_FIELD_NAMES) {
      if (k === 'wallMs') continue;
      const left = (earlier[k] ?? 0) - this.#served[k];
      if (left > 0) rest[k] = left;
    }
    return Object.keys(rest).length === 0 ? undefined : rest;
  }

  #goLive(diverged: string | undefined): undefined {
    this.#live = true;
    this.#plans = new Map();
    if (diverged !== undefined) this.info.diverged = diverged;
    return undefined;
  }

  /**
   * A call of the last served response that waited for approval when the run was cut (its
   * answer not journaled, or another call of its wait had none): it never started, so it runs
   * once answered (not `interrupted`). An approved call whose wait was answered in full may have
   * been running at the cut: its plan is the tool policy's.
   */
  waitedForApproval(callId: string): void {
    if (this.#plans.get(callId)?.kind === 'interrupted') this.#plans.set(callId, { kind: 'run', rerun: false });
  }

  /**
   * The plans of a served response's tool calls. A call with a journaled result is served or
   * run again by its policy. Of the calls without one, the first `toolConcurrency` may have
   * been running at the cut (calls start in order): run again only under `rerun`, else answered
   * as interrupted; the rest never started, and run.
   */
  #plan(turn: number, calls: readonly ToolCall[]): void {
    this.#plans = new Map();
    let unrecorded = 0;
    for (const call of calls) {
      const recorded = this.#tools.get(key(turn, call.id))?.shift();
      const choice = this.#policy(call);
      if (recorded !== undefined) {
        this.#plans.set(
          call.id,
          choice === 'rerun'
            ? { kind: 'run', rerun: true }
            : {
                kind: 'serve',
                result: structuredClone(recorded.result),
                status: recorded.status,
                json: recorded.json,
              },
        );
      } else if (unrecorded++ < this.#concurrency) {
        this.#plans.set(
          call.id,
          choice === 'rerun'
            ? { kind: 'run', rerun: true }
            : {
                kind: 'interrupted',
                note: "interrupted: the run was cut off before this call's result was recorded; not run again on resume (its tool policy is 'serve': it may have had effects)",
              },
        );
      }
    }
  }
}

/**
 * The recording of `resumeFrom` (checked, naming a bad value), for a run that serves recorded
 * responses where `canAccept` (its loop takes them), with tool calls run `toolConcurrency` at
 * once, each call of a served response served or run again by `resumeTools`.
 */
export function resumeRecording(
  from: unknown,
  canAccept: boolean,
  toolConcurrency: number,
  resumeTools?: unknown,
): RunRecording | undefined {
  // Checked with or without a journal, so that a bad policy is named before the first resume needs it.
  const policy = resolveResumeTools(resumeTools);
  if (from === undefined) return undefined;
  if (typeof from !== 'object' || from === null || !Array.isArray((from as ResumeFrom).journal))
    throw new InvalidArgumentError(
      'resumeFrom',
      'an object { journal, usage? } with the journal lines of the interrupted run (loadHistory(file).journal)',
      from,
    );
  const { usage } = from as ResumeFrom;
  if (usage !== undefined && (typeof usage !== 'object' || usage === null))
    throw new InvalidArgumentError('resumeFrom.usage', 'an object of usage totals (costUsd, llmCalls, …)', usage);
  if ((from as { tools?: unknown }).tools !== undefined)
    throw new InvalidArgumentError(
      'resumeFrom.tools',
      'left out: the tool policy is the option `resumeTools` (beside `resumeFrom`), as on runBatch()',
      (from as { tools: unknown }).tools,
    );
  return new RunRecording(from as ResumeFrom, canAccept, toolConcurrency, policy);
}

function key(turn: number, id: string): string {
  return `${turn}\u0000${id}`;
}

function isResult(value: unknown): value is ToolResult {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as ToolResult).callId === 'string' &&
    typeof (value as ToolResult).output === 'string'
  );
}
