// Past 400 lines: the span builder and the OTLP/JSON mapping of its spans are one format's.
import { createHash } from 'node:crypto';
import { isHistoryEntry, type HistoryItem } from '../history/HistoryEntry';
import { RunFactsCollector, type RunUsage, type TurnFacts } from '../history/runFacts';
import type { TransitionRecord } from '../machine/TransitionRecord';
import { InvalidArgumentError } from '../machine/InvalidArgumentError';
import {
  ASM,
  ERROR_TYPE_OTHER,
  GEN_AI,
  GEN_AI_OPERATION,
  GEN_AI_PROVIDER_OTHER,
  INSTRUMENTATION_SCOPE,
  spanName,
} from '../internal/genAiConventions';
import { VERSION } from '../internal/version';
import {
  SPAN_KIND,
  STATUS_CODE,
  type OtlpAnyValue,
  type OtlpKeyValue,
  type OtlpSpan,
  type OtlpTraceExport,
} from './OtlpJson';

/** Options of `historyToOtlp(items, options)`: how to name what the file does not say. */
export interface HistoryToOtlpOptions {
  /** `service.name` of the resource. Default `agent-state-machine`. */
  serviceName?: string;
  /** `gen_ai.agent.name`, and the turn spans' name `invoke_agent {agentName}`. */
  agentName?: string;
  /** `gen_ai.provider.name` (`openai`, `anthropic`, …). Default `_OTHER`, the conventions' fallback. */
  providerName?: string;
  /** Seeds the trace and span ids, so the same file always gives the same ids. Default: the file's run id, else `run`. */
  runId?: string;
}

const SENDING = new Set(['SendingToLLM', 'SendingToolResults']);

/** What the run's facts say of one record: the usage before and after it, and the turn it ended. */
interface Step {
  readonly before: RunUsage | null;
  readonly after: RunUsage | null;
  readonly ended: TurnFacts | undefined;
}

/**
 * Rebuilds OTLP/JSON spans from a run's history, for a run that was not traced live: one trace
 * per turn (`invoke_agent`, from its move into WaitingForUserInput to its terminal move, with
 * every move as a span event), a `chat` span per LLM call (the time spent in the sending
 * state, with the attempts and the usage the records carry), and an `execute_tool` span per
 * tool call (from the tool results kept in the record that leaves RunningTool). Pure: the same
 * history and options give the same output, ids included.
 *
 * What a file cannot say is left out rather than guessed: a call's retries appear as one
 * `chat` span with `agent_state_machine.llm.attempts` and an event per failed attempt. A
 * tool's start is its recorded start if any; else the end of the tool before it, or — when the
 * tools' times add up to more than RunningTool lasted, so they ran at once — its entry. How each
 * turn ended and what it spent are `runFacts`'s, as every reader of the file has them.
 */
export function historyToOtlp(items: readonly HistoryItem[], options: HistoryToOtlpOptions = {}): OtlpTraceExport {
  if (!Array.isArray(items)) throw new InvalidArgumentError('items', 'an array of history entries or records', items);
  if (typeof options !== 'object' || options === null) throw new InvalidArgumentError('options', 'an object', options);
  for (const key of ['serviceName', 'agentName', 'providerName', 'runId'] as const) {
    const value = options[key];
    if (value !== undefined && (typeof value !== 'string' || value === ''))
      throw new InvalidArgumentError(`options.${key}`, 'a non-empty string', value);
  }
  // The run's facts, item by item, so each record meets the turn it ends; bad items are named here.
  const facts = new RunFactsCollector();
  const steps = items.map((item, i): Step => {
    const before = facts.usage;
    const ended = facts.add(item, `items[${i}]`);
    return { before, after: facts.usage, ended };
  });
  let runId = options.runId;
  for (const item of items) if (isHistoryEntry(item) && item.kind === 'meta') runId ??= item.meta.runId;
  const builder = new SpanBuilder(runId ?? 'run', options);
  items.forEach((item, i) => {
    if (!isHistoryEntry(item)) builder.record(item, steps[i]!);
    else if (item.kind === 'record') builder.record(item.record, steps[i]!);
    else if (item.kind === 'rejected') builder.rejected(item.rejected);
    else if (item.kind === 'reset') builder.abandon(item.reset.at, 'the machine was reset mid-turn');
  });
  builder.abandon(undefined, 'the history ends mid-turn');
  return {
    resourceSpans: [
      {
        resource: { attributes: attrs({ 'service.name': options.serviceName ?? 'agent-state-machine' }) },
        scopeSpans: [{ scope: { name: INSTRUMENTATION_SCOPE, version: VERSION }, spans: builder.spans }],
      },
    ],
  };
}

interface OpenTurn {
  span: OtlpSpan;
  /** The run's usage when the turn started: records carry running totals, spans want differences. */
  startUsage: RunUsage | null;
  lastAt: number;
}

class SpanBuilder {
  readonly spans: OtlpSpan[] = [];
  readonly #runId: string;
  readonly #options: HistoryToOtlpOptions;
  #turn: OpenTurn | undefined;
  #turns = 0;
  #ids = 0;

  constructor(runId: string, options: HistoryToOtlpOptions) {
    this.#runId = runId;
    this.#options = options;
  }

  record(r: TransitionRecord<string>, step: Step): void {
    const data = asObject(r.data);
    if (r.to === 'WaitingForUserInput') {
      this.abandon(r.at, `a new turn started in ${r.from}`);
      this.#start(r, data, step.before);
    }
    const turn = this.#turn;
    if (turn === undefined) return; // moves before the first turn (a history cut at the front)
    turn.lastAt = r.at;
    turn.span.events.push({
      timeUnixNano: nanos(r.at),
      name: ASM.transitionEvent,
      attributes: attrs({
        [ASM.transitionFrom]: r.from,
        [ASM.transitionTo]: r.to,
        [ASM.transitionSeq]: r.seq,
        [ASM.transitionForced]: r.forced,
        [ASM.transitionDescription]: r.description,
      }),
    });
    if (SENDING.has(r.from)) this.#chat(turn, r, data, step);
    if (r.from === 'RunningTool') this.#tools(turn, r, data);
    if (step.ended?.end === 'terminal') this.#end(turn, r, data, step.ended.outcome, step.after);
  }

  rejected(r: { at: number; description: string; from: string; to: string }): void {
    this.#turn?.span.events.push({
      timeUnixNano: nanos(r.at),
      name: 'agent_state_machine.rejected_transition',
      attributes: attrs({
        [ASM.transitionFrom]: r.from,
        [ASM.transitionTo]: r.to,
        [ASM.transitionDescription]: r.description,
      }),
    });
  }

  /** Ends an open turn that never reached a terminal state (a crash, a reset, a cut file). */
  abandon(at: number | undefined, why: string): void {
    const turn = this.#turn;
    if (turn === undefined) return;
    turn.span.endTimeUnixNano = nanos(at ?? turn.lastAt);
    turn.span.attributes.push(...attrs({ [GEN_AI.errorType]: 'incomplete', [ASM.outcome]: 'incomplete' }));
    turn.span.status = { code: STATUS_CODE.error, message: why };
    this.#turn = undefined;
  }

  #start(r: TransitionRecord<string>, data: Record<string, unknown> | undefined, usage: RunUsage | null): void {
    this.#turns += 1;
    const turnNo = typeof data?.['turn'] === 'number' ? data['turn'] : this.#turns;
    const { agentName } = this.#options;
    const span = this.#span(
      hexId(`${this.#runId}:trace:${this.#turns}`, 32),
      undefined,
      spanName(GEN_AI_OPERATION.invokeAgent, agentName),
      SPAN_KIND.internal,
      r.at,
      r.at,
    );
    span.attributes.push(
      ...attrs({
        [GEN_AI.operationName]: GEN_AI_OPERATION.invokeAgent,
        [GEN_AI.providerName]: this.#options.providerName ?? GEN_AI_PROVIDER_OTHER,
        [GEN_AI.agentName]: agentName,
        [ASM.runId]: this.#runId,
        [ASM.turn]: turnNo,
      }),
    );
    this.#turn = { span, startUsage: usage, lastAt: r.at };
  }

  #chat(
    turn: OpenTurn,
    r: TransitionRecord<string>,
    data: Record<string, unknown> | undefined,
    { before, after, ended }: Step,
  ): void {
    const failures = Array.isArray(data?.['failures']) ? (data['failures'] as unknown[]).map(asObject) : [];
    // A budget stop before the call, or a cancel before any attempt, made no LLM call.
    const stopped = ended?.outcome === 'cancelled' || ended?.outcome === 'budget_exceeded';
    if (failures.length === 0 && data?.['attempt'] === undefined && stopped) return;
    const model = str(data?.['model']);
    const span = this.#span(
      turn.span.traceId,
      turn.span.spanId,
      spanName(GEN_AI_OPERATION.chat, model),
      SPAN_KIND.client,
      r.at - r.durationMs,
      r.at,
    );
    // What the call added, when this record tells it: a response's record always does. A turn's
    // end records the totals too, whose tokens and cost a failed call left as they were: that
    // says nothing of the call (its attempts count as LLM calls, but a chat span shows no count).
    const told = after !== null && after !== before && (r.to === 'ProcessingLLMResponse' || !sameSpend(after, before));
    const delta = told ? minus(after, before) : undefined;
    span.attributes.push(
      ...attrs({
        [GEN_AI.operationName]: GEN_AI_OPERATION.chat,
        [GEN_AI.providerName]: this.#options.providerName ?? GEN_AI_PROVIDER_OTHER,
        [GEN_AI.requestModel]: model,
        [GEN_AI.responseModel]: model,
        [GEN_AI.responseFinishReasons]:
          str(data?.['finishReason']) === undefined ? undefined : [str(data?.['finishReason'])!],
        [ASM.llmOperation]: r.from === 'SendingToLLM' ? 'sendUserMessage' : 'sendToolResults',
        [ASM.llmAttempts]:
          typeof data?.['attempts'] === 'number'
            ? data['attempts']
            : typeof data?.['attempt'] === 'number'
              ? data['attempt']
              : failures.length || undefined,
        [GEN_AI.usageInputTokens]: delta?.inputTokens,
        [GEN_AI.usageOutputTokens]: delta?.outputTokens,
        ...(delta !== undefined && delta.costUsd > 0
          ? { [GEN_AI.usageCostAmount]: delta.costUsd, [GEN_AI.usageCostCurrency]: 'USD' }
          : {}),
      }),
    );
    for (const failure of failures) {
      span.events.push({
        timeUnixNano: nanos(r.at),
        name: 'agent_state_machine.llm.attempt_failed',
        attributes: attrs({
          [ASM.llmAttempt]: num(failure?.['attempt']),
          'exception.message': str(failure?.['error']),
          'agent_state_machine.llm.retry_delay_ms': num(failure?.['delayMs']),
        }),
      });
    }
    if (r.to !== 'ProcessingLLMResponse') {
      const type = ended?.end === 'terminal' && ended.outcome !== 'error' ? ended.outcome : 'llm_call_failed';
      span.attributes.push(...attrs({ [GEN_AI.errorType]: type }));
      span.status = { code: STATUS_CODE.error, message: r.description };
    }
  }

  #tools(turn: OpenTurn, r: TransitionRecord<string>, data: Record<string, unknown> | undefined): void {
    const results = Array.isArray(data?.['results']) ? (data['results'] as unknown[]) : [];
    const enteredAt = r.at - r.durationMs;
    // Without recorded starts: one after the other, unless their times add up to more than
    // the state lasted — then they ran at once (toolConcurrency), and each starts on entry.
    const total = results.reduce<number>((sum, raw) => sum + Math.max(0, num(asObject(raw)?.['ms']) ?? 0), 0);
    const atOnce = total > r.durationMs;
    let cursor = enteredAt;
    for (const raw of results) {
      const item = asObject(raw);
      const name = str(item?.['name']);
      const ms = Math.max(0, num(item?.['ms']) ?? 0);
      const started = num(item?.['startedAt']) ?? (atOnce ? enteredAt : cursor);
      cursor = started + ms;
      const span = this.#span(
        turn.span.traceId,
        turn.span.spanId,
        spanName(GEN_AI_OPERATION.executeTool, name),
        SPAN_KIND.internal,
        started,
        started + ms,
      );
      const note = str(item?.['note']) ?? '';
      const status =
        item?.['isError'] !== true
          ? 'ok'
          : note.startsWith('interrupted')
            ? 'interrupted'
            : note.startsWith('not run')
              ? 'not_run'
              : 'error';
      span.attributes.push(
        ...attrs({
          [GEN_AI.operationName]: GEN_AI_OPERATION.executeTool,
          [GEN_AI.toolName]: name ?? 'unknown',
          [GEN_AI.toolCallId]: str(item?.['callId']),
          [GEN_AI.toolType]: 'function',
          [ASM.toolStatus]: status,
          [GEN_AI.errorType]: status === 'ok' ? undefined : status === 'error' ? 'tool_error' : status,
        }),
      );
      if (status !== 'ok') span.status = { code: STATUS_CODE.error, ...(note === '' ? {} : { message: note }) };
    }
  }

  #end(
    turn: OpenTurn,
    r: TransitionRecord<string>,
    data: Record<string, unknown> | undefined,
    outcome: string,
    totals: RunUsage | null,
  ): void {
    const usage = totals === null ? undefined : minus(totals, turn.startUsage);
    const span = turn.span;
    span.endTimeUnixNano = nanos(r.at);
    span.attributes.push(
      ...attrs({
        [ASM.outcome]: outcome,
        [GEN_AI.usageInputTokens]: usage?.inputTokens,
        [GEN_AI.usageOutputTokens]: usage?.outputTokens,
        [ASM.usageCostUsd]: usage?.costUsd,
        [ASM.usageLlmCalls]: usage?.llmCalls,
        [ASM.usageToolCalls]: usage?.toolCalls,
        [ASM.budgetStoppedBy]: str(data?.['limit']),
        [ASM.budgetUsed]: str(data?.['limit']) === undefined ? undefined : num(data?.['used']),
        [ASM.budgetMax]: str(data?.['limit']) === undefined ? undefined : num(data?.['max']),
      }),
    );
    if (outcome !== 'end_of_turn') {
      span.attributes.push(...attrs({ [GEN_AI.errorType]: outcome || ERROR_TYPE_OTHER }));
      span.status = { code: STATUS_CODE.error, message: r.description };
    }
    this.#turn = undefined;
  }

  #span(traceId: string, parent: string | undefined, name: string, kind: number, start: number, end: number): OtlpSpan {
    this.#ids += 1;
    const span: OtlpSpan = {
      traceId,
      spanId: hexId(`${this.#runId}:span:${this.#ids}`, 16),
      ...(parent === undefined ? {} : { parentSpanId: parent }),
      name,
      kind,
      startTimeUnixNano: nanos(start),
      endTimeUnixNano: nanos(Math.max(start, end)),
      attributes: [],
      events: [],
      status: { code: STATUS_CODE.unset },
    };
    this.spans.push(span);
    return span;
  }
}

/** Attribute values to OTLP key-values; `undefined` values are left out. */
export function attrs(values: Record<string, string | number | boolean | string[] | undefined>): OtlpKeyValue[] {
  const out: OtlpKeyValue[] = [];
  for (const [key, value] of Object.entries(values)) {
    if (value === undefined) continue;
    out.push({ key, value: anyValue(value) });
  }
  return out;
}

function anyValue(value: string | number | boolean | string[]): OtlpAnyValue {
  if (Array.isArray(value)) return { arrayValue: { values: value.map((v) => ({ stringValue: v })) } };
  if (typeof value === 'string') return { stringValue: value };
  if (typeof value === 'boolean') return { boolValue: value };
  return Number.isInteger(value) ? { intValue: String(value) } : { doubleValue: value };
}

/** Epoch milliseconds (possibly fractional) as OTLP's decimal nanoseconds, exactly. */
export function nanos(ms: number): string {
  const whole = Math.floor(ms);
  return (BigInt(whole) * 1_000_000n + BigInt(Math.round((ms - whole) * 1e6))).toString();
}

/** A deterministic, non-zero hex id of `length` digits. */
function hexId(seed: string, length: 16 | 32): string {
  const hex = createHash('sha256').update(seed).digest('hex').slice(0, length);
  return /^0+$/.test(hex) ? `${'0'.repeat(length - 1)}1` : hex;
}

/** Whether `a` holds the same tokens and cost as `b` (none, when `b` is null). */
function sameSpend(a: RunUsage, b: RunUsage | null): boolean {
  return (
    a.costUsd === (b?.costUsd ?? 0) &&
    a.inputTokens === (b?.inputTokens ?? 0) &&
    a.outputTokens === (b?.outputTokens ?? 0)
  );
}

function minus(a: RunUsage, b: RunUsage | null): Omit<RunUsage, 'cachedInputTokens'> {
  if (b === null) return a;
  return {
    inputTokens: a.inputTokens - b.inputTokens,
    outputTokens: a.outputTokens - b.outputTokens,
    costUsd: Math.round((a.costUsd - b.costUsd) * 1e10) / 1e10,
    toolCalls: a.toolCalls - b.toolCalls,
    llmCalls: a.llmCalls - b.llmCalls,
  };
}

function asObject(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function num(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}
