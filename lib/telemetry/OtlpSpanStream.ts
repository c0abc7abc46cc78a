// Past 400 lines: the span builder and the OTLP/JSON mapping of its spans are one format's.
import { isHistoryEntry, type HistoryItem } from '../history/HistoryEntry';
import { RunFactsCollector, type RunUsage, type TurnFacts } from '../history/runFacts';
import type { TransitionRecord } from '../machine/TransitionRecord';
import { InvalidArgumentError } from '../machine/InvalidArgumentError';
import type { TransitionTable } from '../machine/TransitionTable';
import { DEFAULT_TABLE } from '../machine/transitions';
import { tableRoles, type TableRoles } from '../history/tableRoles';
import {
  ASM,
  ERROR_TYPE_OTHER,
  GEN_AI,
  GEN_AI_OPERATION,
  GEN_AI_PROVIDER_OTHER,
  spanName,
} from '../internal/genAiConventions';
import { SPAN_KIND, STATUS_CODE, type OtlpSpan } from './OtlpJson';
import { attrs, hexId, nanos } from './otlpValues';
import { TimeCheck } from './TimeCheck';
import { stallEvent } from './stallEvent';
import { asObject, num, str } from './recordValues';

/** Options of `historyToOtlp(items, options)` and `OtlpSpanStream`: how to name what the file does not say. */
export interface HistoryToOtlpOptions {
  /** `service.name` of the resource. Default `agent-state-machine`. */
  serviceName?: string;
  /** `gen_ai.agent.name`, and the turn spans' name `invoke_agent {agentName}`. */
  agentName?: string;
  /** `gen_ai.provider.name` (`openai`, `anthropic`, …). Default `_OTHER`, the conventions' fallback. */
  providerName?: string;
  /** Seeds the trace and span ids, so the same file always gives the same ids. Default: the file's run id, else `run`. */
  runId?: string;
  /**
   * Told of each time that cannot be real and was clamped (a duration longer than the epoch,
   * a tool that would end after 2554), with the line it is on. Default: `process.emitWarning`.
   */
  onWarning?: (message: string) => void;
  /** The file the items were read from, to name `file:line` in errors and warnings. */
  file?: string;
}

/** The most events one span keeps (a turn's moves, a call's failed attempts); the rest are counted in `droppedEventsCount`. */
export const MAX_SPAN_EVENTS = 1024;

const DEFAULT_ROLES = tableRoles(DEFAULT_TABLE as TransitionTable<string>);

/** What the run's facts say of one record: the usage before and after it, and the turn it ended. */
interface Step {
  readonly before: RunUsage | null;
  readonly after: RunUsage | null;
  readonly ended: TurnFacts | undefined;
}

/**
 * Rebuilds OTLP/JSON spans from a run's history as it is read, item by item, handing each span
 * to `emit` as soon as it is complete (a tool span at once, a turn's span when the turn ends):
 * memory stays bounded whatever the file holds — a span at a time, the open turn's span with
 * at most `MAX_SPAN_EVENTS` events, and the run's facts kept without their history
 * (`RunFactsCollector` with `retain: false`). Spans come out in the order they end, children
 * before their turn. See `historyToOtlp` for what the spans are.
 *
 * Times are checked: a record, rejected move or reset whose time is not epoch milliseconds
 * OTLP can carry (0 to 2^64 - 1 nanoseconds) throws, naming the line; a duration or tool time
 * that would put a span before the epoch or past that end is clamped with a warning naming
 * the line. So every timestamp written is a valid unsigned 64-bit nanosecond count.
 */
export class OtlpSpanStream {
  readonly #facts = new RunFactsCollector({ retain: false });
  readonly #builder: SpanBuilder;
  readonly #options: HistoryToOtlpOptions;
  readonly #times: TimeCheck;
  #index = 0;
  #ended = false;

  /** `emit` takes each span as it completes, with its place in the order spans were started (1, 2, …). */
  constructor(options: HistoryToOtlpOptions, emit: (span: OtlpSpan, order: number) => void) {
    checkOptions(options);
    if (typeof emit !== 'function') throw new InvalidArgumentError('emit', 'a function', emit);
    this.#options = options;
    const warn =
      options.onWarning ?? ((message: string) => process.emitWarning(message, { code: 'AGENT_SM_OTLP_TIME' }));
    this.#times = new TimeCheck(warn);
    this.#builder = new SpanBuilder(options, emit, this.#times);
  }

  /** Takes the next item (a line read from a file, or a record); its spans that completed are emitted before it returns. */
  add(item: HistoryItem): void {
    if (this.#ended) throw new Error('OtlpSpanStream.add() after end()');
    const name = `items[${this.#index++}]`;
    const where = isHistoryEntry(item) && typeof item.line === 'number' ? item.line : undefined;
    this.#times.at(where, name, this.#options.file);
    const before = this.#facts.usage;
    const ended = this.#facts.add(item, name);
    const step: Step = { before, after: this.#facts.usage, ended };
    const builder = this.#builder;
    if (!isHistoryEntry(item)) {
      this.#times.real(item.at, 'at');
      builder.record(item, step);
    } else if (item.kind === 'record') {
      this.#times.real(item.record.at, 'at');
      builder.record(item.record, step);
    } else if (item.kind === 'rejected') {
      this.#times.real(item.rejected.at, 'at');
      builder.rejected(item.rejected);
    } else if (item.kind === 'reset') {
      this.#times.real(item.reset.at, 'at');
      builder.abandon(item.reset.at, 'the machine was reset mid-turn');
    } else if (item.kind === 'meta') {
      builder.meta(item.meta.runId);
      builder.useTable(item.table);
    }
  }

  /** The end of the history: a turn still open is emitted, marked incomplete. */
  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#builder.abandon(undefined, 'the history ends mid-turn');
  }
}

function checkOptions(options: HistoryToOtlpOptions): void {
  if (typeof options !== 'object' || options === null) throw new InvalidArgumentError('options', 'an object', options);
  for (const key of ['serviceName', 'agentName', 'providerName', 'runId', 'file'] as const) {
    const value = options[key];
    if (value !== undefined && (typeof value !== 'string' || value === ''))
      throw new InvalidArgumentError(`options.${key}`, 'a non-empty string', value);
  }
  if (options.onWarning !== undefined && typeof options.onWarning !== 'function')
    throw new InvalidArgumentError('options.onWarning', 'a function', options.onWarning);
}

/** Adds an event to a span, or counts it as dropped once the span holds `MAX_SPAN_EVENTS`. */
function pushEvent(span: OtlpSpan, event: OtlpSpan['events'][number]): void {
  if (span.events.length < MAX_SPAN_EVENTS) span.events.push(event);
  else span.droppedEventsCount = (span.droppedEventsCount ?? 0) + 1;
}

/** The run's uncertain and released USD, as its records' running totals say (`data.usage`). */
interface Money {
  readonly uncertainUsd: number;
  readonly releasedUsd: number;
  /** LLM calls of unknown cost (no price, no hold). */
  readonly unpricedCalls: number;
}

const NO_MONEY: Money = { uncertainUsd: 0, releasedUsd: 0, unpricedCalls: 0 };

interface OpenTurn {
  span: OtlpSpan;
  /** The run's usage when the turn started: records carry running totals, spans want differences. */
  startUsage: RunUsage | null;
  /** The run's uncertain and released USD when the turn started. */
  startMoney: Money;
  /** When it started: a file whose times run backwards must not end a span before its start. */
  startAt: number;
  lastAt: number;
}

class SpanBuilder {
  #runId: string | undefined;
  readonly #options: HistoryToOtlpOptions;
  readonly #emit: (span: OtlpSpan, order: number) => void;
  readonly #order = new WeakMap<OtlpSpan, number>();
  readonly #times: TimeCheck;
  #turn: OpenTurn | undefined;
  #turns = 0;
  /** The roles of the file's table (the default one until a meta line says otherwise). */
  #roles: TableRoles = DEFAULT_ROLES;
  #ids = 0;
  /** The run's uncertain and released USD as of the last record that carried its running totals. */
  #money: Money = NO_MONEY;

  constructor(options: HistoryToOtlpOptions, emit: (span: OtlpSpan, order: number) => void, times: TimeCheck) {
    this.#runId = options.runId;
    this.#options = options;
    this.#emit = emit;
    this.#times = times;
  }

  /** The file's run id, from its meta line, seeds the ids unless the options name one; only before the first span. */
  meta(runId: string): void {
    if (this.#ids === 0) this.#runId ??= runId;
  }

  useTable(table: TransitionTable<string>): void {
    this.#roles = tableRoles(table);
  }

  #done(span: OtlpSpan): void {
    this.#emit(span, this.#order.get(span)!);
  }

  get #run(): string {
    return (this.#runId ??= 'run');
  }

  record(r: TransitionRecord<string>, step: Step): void {
    const data = asObject(r.data);
    // A move's entry: its time less its duration, clamped to the epoch when it cannot be real.
    const enteredAt = this.#times.entered(r.at, r.durationMs);
    const roles = this.#roles;
    const moneyBefore = this.#money;
    this.#money = moneyOf(data) ?? moneyBefore;
    // A move into an idle state (WaitingForUserInput in the default table) opens a turn.
    if (roles.idle.has(r.to)) {
      this.abandon(r.at, `a new turn started in ${r.from}`);
      this.#start(r, data, step.before);
    }
    const turn = this.#turn;
    if (turn === undefined) return; // moves before the first turn (a history cut at the front)
    turn.lastAt = r.at;
    pushEvent(turn.span, {
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
    const stall = stallEvent(r);
    if (stall !== undefined) pushEvent(turn.span, stall);
    if (roles.llmRequest.has(r.from)) this.#chat(turn, r, data, step, enteredAt, moneyBefore);
    if (roles.toolRun.has(r.from)) this.#tools(turn, r, data, enteredAt);
    if (step.ended?.end === 'terminal') this.#end(turn, r, data, step.ended.outcome, step.after);
  }

  rejected(r: { at: number; description: string; from: string; to: string }): void {
    if (this.#turn !== undefined)
      pushEvent(this.#turn.span, {
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
    turn.span.endTimeUnixNano = nanos(Math.max(turn.startAt, at ?? turn.lastAt));
    turn.span.attributes.push(...attrs({ [GEN_AI.errorType]: 'incomplete', [ASM.outcome]: 'incomplete' }));
    turn.span.status = { code: STATUS_CODE.error, message: why };
    this.#turn = undefined;
    this.#done(turn.span);
  }

  #start(r: TransitionRecord<string>, data: Record<string, unknown> | undefined, usage: RunUsage | null): void {
    this.#turns += 1;
    const turnNo = typeof data?.['turn'] === 'number' ? data['turn'] : this.#turns;
    const { agentName } = this.#options;
    const span = this.#span(
      hexId(`${this.#run}:trace:${this.#turns}`, 32),
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
        [ASM.runId]: this.#run,
        [ASM.turn]: turnNo,
      }),
    );
    this.#turn = { span, startUsage: usage, startMoney: this.#money, startAt: r.at, lastAt: r.at };
  }

  #chat(
    turn: OpenTurn,
    r: TransitionRecord<string>,
    data: Record<string, unknown> | undefined,
    { before, after, ended }: Step,
    enteredAt: number,
    moneyBefore: Money,
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
      enteredAt,
      r.at,
    );
    // What the call added, when this record tells it: a response's record always does. A turn's
    // end records the totals too, whose tokens and cost a failed call left as they were: that
    // says nothing of the call (its attempts count as LLM calls, but a chat span shows no count).
    const answered = this.#roles.llmResponse.has(r.to);
    const told = after !== null && after !== before && (answered || !sameSpend(after, before));
    const delta = told ? minus(after, before) : undefined;
    // Of what the call was charged, what its attempts held as uncertain (billed is the rest), and what they let go.
    const uncertain = usd(this.#money.uncertainUsd - moneyBefore.uncertainUsd);
    const released = usd(this.#money.releasedUsd - moneyBefore.releasedUsd);
    const billed = delta === undefined ? 0 : usd(delta.costUsd - uncertain);
    span.attributes.push(
      ...attrs({
        [GEN_AI.operationName]: GEN_AI_OPERATION.chat,
        [GEN_AI.providerName]: this.#options.providerName ?? GEN_AI_PROVIDER_OTHER,
        [GEN_AI.requestModel]: model,
        [GEN_AI.responseModel]: model,
        [GEN_AI.responseFinishReasons]:
          str(data?.['finishReason']) === undefined ? undefined : [str(data?.['finishReason'])!],
        [ASM.llmOperation]:
          str(data?.['operation']) ?? (this.#roles.userRequest.has(r.from) ? 'sendUserMessage' : 'sendToolResults'),
        [ASM.llmAttempts]:
          typeof data?.['attempts'] === 'number'
            ? data['attempts']
            : typeof data?.['attempt'] === 'number'
              ? data['attempt']
              : failures.length || undefined,
        [GEN_AI.usageInputTokens]: delta?.inputTokens,
        [GEN_AI.usageOutputTokens]: delta?.outputTokens,
        // The call's own money in the three figures, as the live tracer writes it.
        ...(billed > 0 ? { [ASM.llmBilledUsd]: billed } : {}),
        ...(uncertain > 0 ? { [ASM.llmUncertainUsd]: uncertain } : {}),
        ...(released > 0 ? { [ASM.llmReleasedUsd]: released } : {}),
        // A call whose cost nobody knows: said, as the live tracer says it, never a bare $0.
        ...(this.#money.unpricedCalls > moneyBefore.unpricedCalls ? { [ASM.llmMoney]: 'unknown' } : {}),
      }),
    );
    for (const failure of failures) {
      pushEvent(span, {
        timeUnixNano: nanos(r.at),
        name: 'agent_state_machine.llm.attempt_failed',
        attributes: attrs({
          [ASM.llmAttempt]: num(failure?.['attempt']),
          [GEN_AI.exceptionMessage]: str(failure?.['error']),
          'agent_state_machine.llm.retry_delay_ms': num(failure?.['delayMs']),
        }),
      });
    }
    if (!answered) {
      const type = ended?.end === 'terminal' && ended.outcome !== 'error' ? ended.outcome : 'llm_call_failed';
      span.attributes.push(...attrs({ [GEN_AI.errorType]: type }));
      span.status = { code: STATUS_CODE.error, message: r.description };
    }
    this.#done(span);
  }

  #tools(
    turn: OpenTurn,
    r: TransitionRecord<string>,
    data: Record<string, unknown> | undefined,
    enteredAt: number,
  ): void {
    const results = Array.isArray(data?.['results']) ? (data['results'] as unknown[]) : [];
    // Without recorded starts: one after the other, unless their times add up to more than
    // the state lasted — then they ran at once (toolConcurrency), and each starts on entry.
    const total = results.reduce<number>((sum, raw) => sum + Math.max(0, num(asObject(raw)?.['ms']) ?? 0), 0);
    const atOnce = total > r.at - enteredAt;
    let cursor = enteredAt;
    results.forEach((raw, i) => {
      const item = asObject(raw);
      const name = str(item?.['name']);
      const ms = Math.max(0, num(item?.['ms']) ?? 0);
      const recorded = this.#times.toolStart(num(item?.['startedAt']), i);
      const started = recorded ?? (atOnce ? enteredAt : cursor);
      const ended = this.#times.toolEnd(started, ms, i);
      cursor = ended;
      const span = this.#span(
        turn.span.traceId,
        turn.span.spanId,
        spanName(GEN_AI_OPERATION.executeTool, name),
        SPAN_KIND.internal,
        started,
        ended,
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
      this.#done(span);
    });
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
    span.endTimeUnixNano = nanos(Math.max(turn.startAt, r.at));
    span.attributes.push(
      ...attrs({
        [ASM.outcome]: outcome,
        [GEN_AI.usageInputTokens]: usage?.inputTokens,
        [GEN_AI.usageOutputTokens]: usage?.outputTokens,
        [ASM.usageCostUsd]: usage?.costUsd,
        [ASM.usageUncertainUsd]:
          totals === null ? undefined : usd(this.#money.uncertainUsd - turn.startMoney.uncertainUsd),
        [ASM.usageReleasedUsd]:
          totals === null ? undefined : usd(this.#money.releasedUsd - turn.startMoney.releasedUsd),
        [ASM.usageUnpricedCalls]:
          totals === null ? undefined : this.#money.unpricedCalls - turn.startMoney.unpricedCalls,
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
    this.#done(span);
  }

  #span(traceId: string, parent: string | undefined, name: string, kind: number, start: number, end: number): OtlpSpan {
    this.#ids += 1;
    const span: OtlpSpan = {
      traceId,
      spanId: hexId(`${this.#run}:span:${this.#ids}`, 16),
      ...(parent === undefined ? {} : { parentSpanId: parent }),
      name,
      kind,
      startTimeUnixNano: nanos(start),
      endTimeUnixNano: nanos(Math.max(start, end)),
      attributes: [],
      events: [],
      status: { code: STATUS_CODE.unset },
    };
    this.#order.set(span, this.#ids);
    return span;
  }
}

/** Whether `a` holds the same tokens and cost as `b` (nothing spent yet, when `b` is null). */
function sameSpend(a: RunUsage, b: RunUsage | null): boolean {
  const before = b ?? NOTHING_SPENT;
  return a.costUsd === before.costUsd && a.inputTokens === before.inputTokens && a.outputTokens === before.outputTokens;
}

/** The totals before a run's first usage record: nothing spent (not a count missing). */
const NOTHING_SPENT = { costUsd: 0, inputTokens: 0, outputTokens: 0 } as const;

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

/** The uncertain and released USD of a record's running totals (`data.usage` with its `llmCalls`), if it carries them. */
function moneyOf(data: Record<string, unknown> | undefined): Money | undefined {
  const usage = asObject(data?.['usage']);
  if (usage === undefined || num(usage['llmCalls']) === undefined) return undefined;
  const uncertainUsd = num(usage['uncertainUsd']);
  const releasedUsd = num(usage['releasedUsd']);
  const unpricedCalls = num(usage['unpricedCalls']);
  if (uncertainUsd === undefined && releasedUsd === undefined && unpricedCalls === undefined) return undefined;
  return { uncertainUsd: uncertainUsd ?? 0, releasedUsd: releasedUsd ?? 0, unpricedCalls: unpricedCalls ?? 0 };
}

/** A difference of USD figures, rounded as the records' are (no float dust below 1e-10). */
function usd(value: number): number {
  return Math.round(value * 1e10) / 1e10;
}
