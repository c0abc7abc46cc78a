import {
  context as otelContext,
  trace,
  SpanKind,
  SpanStatusCode,
  type Attributes,
  type Context,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import {
  InvalidArgumentError,
  type AgentEvents,
  type AgentWithStateMachine,
  type AttemptMoney,
  type LLMAttemptEvent,
  type ToolCallEvent,
  type TransitionRecord,
  type Usage,
} from 'agent-state-machine';
import {
  ASM,
  GEN_AI,
  GEN_AI_OPERATION,
  GEN_AI_PROVIDER_OTHER,
  INSTRUMENTATION_SCOPE,
  snakeCase,
  spanName,
} from '../../internal/genAiConventions';
import { VERSION } from '../../internal/version';

/** Options of `traceAgent(agent, options)`. */
export interface TraceAgentOptions {
  /** The tracer spans are made with. Default: `trace.getTracer('agent-state-machine')` from the global provider. */
  tracer?: Tracer;
  /** `gen_ai.agent.name`; the turn spans are named `invoke_agent {agentName}`. */
  agentName?: string;
  /** `gen_ai.provider.name` (`openai`, `anthropic`, `aws.bedrock`, …). Default `_OTHER`, the conventions' fallback. */
  providerName?: string;
  /** `gen_ai.request.model`, when the loop always asks for one model; else the model a response names is used. */
  model?: string;
  /**
   * Record the user's message, the LLM's text, tool arguments and tool results on the spans
   * (`gen_ai.input.messages`, `gen_ai.output.messages`, `gen_ai.tool.call.arguments`,
   * `gen_ai.tool.call.result`). A `chat` span's input is what that call adds — the user's
   * message, or the tool results and messages — since the loop, not the adapter, owns the
   * whole conversation. Default false: prompts and tool data often hold what must not leave
   * the process.
   */
  captureContent?: boolean;
  /** The parent of the turn spans (e.g. a batch's `invoke_workflow` span). Default: the active context when a turn starts. */
  parentContext?: Context;
}

/** What `traceAgent` needs of an agent: its machine, usage, limits and adapter events. */
export type TraceableAgent = Pick<AgentWithStateMachine, 'machine' | 'usage' | 'budget'> & {
  on<E extends keyof AgentEvents>(event: E, listener: (...args: AgentEvents[E]) => void): unknown;
  off<E extends keyof AgentEvents>(event: E, listener: (...args: AgentEvents[E]) => void): unknown;
};

/**
 * Traces an agent's turns as OpenTelemetry spans named by the GenAI semantic conventions: a
 * turn is an `invoke_agent` span (INTERNAL) with the machine's moves as span events; each LLM
 * attempt a `chat` span (CLIENT) and each tool call an `execute_tool` span (INTERNAL), both
 * children of the turn. Returns a function that stops tracing (a turn in flight is ended as
 * it stands). Only `@opentelemetry/api` is used: spans go wherever the application's SDK sends them.
 */
export function traceAgent(agent: TraceableAgent, options: TraceAgentOptions = {}): () => void {
  const { tracer, provider, capture } = checkTraceOptions(agent, options);

  let turn: { span: Span; context: Context; number: number } | undefined;
  // The adapter makes a turn's opening move (into WaitingForUserInput) just before `turnStart`:
  // kept here, it becomes the turn span's first event, as in a history exported after the fact.
  let opening: TransitionRecord | undefined;

  const onTurnStart = (info: AgentEvents['turnStart'][0]): void => {
    endTurn(undefined, 'a new turn started before this one ended');
    const parent = options.parentContext ?? otelContext.active();
    const span = tracer.startSpan(
      spanName(GEN_AI_OPERATION.invokeAgent, options.agentName),
      {
        kind: SpanKind.INTERNAL,
        startTime: info.startedAt,
        attributes: clean({
          [GEN_AI.operationName]: GEN_AI_OPERATION.invokeAgent,
          [GEN_AI.providerName]: provider,
          [GEN_AI.agentName]: options.agentName,
          [GEN_AI.requestModel]: options.model,
          [ASM.turn]: info.turn,
          ...budgetLimits(agent.budget),
          [GEN_AI.inputMessages]: capture
            ? JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: info.input }] }])
            : undefined,
        }),
      },
      parent,
    );
    turn = { span, context: trace.setSpan(parent, span), number: info.turn };
    if (opening !== undefined && opening.to === 'WaitingForUserInput') onTransition(opening);
    opening = undefined;
  };

  const onTransition = (record: TransitionRecord): void => {
    if (turn === undefined) {
      opening = record;
      return;
    }
    turn.span.addEvent(
      ASM.transitionEvent,
      {
        [ASM.transitionFrom]: record.from,
        [ASM.transitionTo]: record.to,
        [ASM.transitionSeq]: record.seq,
        [ASM.transitionForced]: record.forced,
        [ASM.transitionDescription]: record.description,
      },
      record.at,
    );
  };

  const onLlmAttempt = (event: LLMAttemptEvent): void => {
    if (turn === undefined) return;
    const model = options.model ?? event.response?.model;
    const span = tracer.startSpan(
      spanName(GEN_AI_OPERATION.chat, model),
      {
        kind: SpanKind.CLIENT,
        startTime: event.startedAt,
        attributes: chatAttributes(event, model, provider, capture),
      },
      turn.context,
    );
    if (event.error !== undefined) failSpan(span, event.error);
    span.end(event.endedAt);
  };

  const onToolCall = (event: ToolCallEvent): void => {
    if (turn === undefined) return;
    const span = tracer.startSpan(
      spanName(GEN_AI_OPERATION.executeTool, event.call.name),
      {
        kind: SpanKind.INTERNAL,
        startTime: event.startedAt,
        attributes: toolAttributes(event, capture),
      },
      turn.context,
    );
    if (event.status !== 'ok') {
      span.setAttribute(GEN_AI.errorType, event.status === 'error' ? 'tool_error' : event.status);
      span.setStatus({ code: SpanStatusCode.ERROR, message: event.result.output });
    }
    span.end(event.endedAt);
  };

  const onTurnEnd = (info: AgentEvents['turnEnd'][0]): void => {
    if (turn === undefined) return;
    const { result } = info;
    const span = turn.span;
    span.setAttributes(turnEndAttributes(agent, result, capture));
    const error = result.error as { message?: string } | undefined;
    // An answer made within the cap (`wrapped_up`) is no error.
    if (result.outcome !== 'end_of_turn' && result.outcome !== 'wrapped_up') {
      span.setAttribute(GEN_AI.errorType, result.outcome);
      span.setStatus({ code: SpanStatusCode.ERROR, message: error?.message ?? result.outcome });
    }
    span.end(info.endedAt);
    turn = undefined;
  };

  function endTurn(at: number | undefined, why: string): void {
    if (turn === undefined) return;
    turn.span.setAttribute(GEN_AI.errorType, 'incomplete');
    turn.span.setStatus({ code: SpanStatusCode.ERROR, message: why });
    turn.span.end(at);
    turn = undefined;
  }

  agent.on('turnStart', onTurnStart);
  agent.on('llmAttempt', onLlmAttempt);
  agent.on('toolCall', onToolCall);
  agent.on('turnEnd', onTurnEnd);
  agent.machine.on('transition', onTransition);
  let stopped = false;
  return () => {
    if (stopped) return;
    stopped = true;
    agent.off('turnStart', onTurnStart);
    agent.off('llmAttempt', onLlmAttempt);
    agent.off('toolCall', onToolCall);
    agent.off('turnEnd', onTurnEnd);
    agent.machine.off('transition', onTransition);
    endTurn(undefined, 'tracing stopped mid-turn');
  };
}

/** Checks `traceAgent`'s arguments, naming the value that is wrong; the tracer and what the options mean. */
function checkTraceOptions(
  agent: TraceableAgent,
  options: TraceAgentOptions,
): { tracer: Tracer; provider: string; capture: boolean } {
  if (
    typeof agent !== 'object' ||
    agent === null ||
    typeof (agent as { on?: unknown }).on !== 'function' ||
    typeof (agent as { machine?: unknown }).machine !== 'object'
  ) {
    throw new InvalidArgumentError(
      'agent',
      'an AgentWithStateMachine (with its machine and on/off for adapter events)',
      agent,
    );
  }
  if (typeof options !== 'object' || options === null) throw new InvalidArgumentError('options', 'an object', options);
  for (const key of ['agentName', 'providerName', 'model'] as const) {
    const value = options[key];
    if (value !== undefined && (typeof value !== 'string' || value === ''))
      throw new InvalidArgumentError(`options.${key}`, 'a non-empty string', value);
  }
  if (options.captureContent !== undefined && typeof options.captureContent !== 'boolean')
    throw new InvalidArgumentError('options.captureContent', 'a boolean', options.captureContent);
  const tracer = options.tracer ?? trace.getTracer(INSTRUMENTATION_SCOPE, VERSION);
  if (typeof tracer?.startSpan !== 'function')
    throw new InvalidArgumentError('options.tracer', 'an OpenTelemetry Tracer', options.tracer);
  return {
    tracer,
    provider: options.providerName ?? GEN_AI_PROVIDER_OTHER,
    capture: options.captureContent === true,
  };
}

/** The attributes of an LLM attempt's `chat` span. */
function chatAttributes(
  event: LLMAttemptEvent,
  model: string | undefined,
  provider: string,
  capture: boolean,
): Attributes {
  const usage = event.usage ?? event.response?.usage;
  const finish = event.response?.finishReason;
  return clean({
    [GEN_AI.operationName]: GEN_AI_OPERATION.chat,
    [GEN_AI.providerName]: provider,
    [GEN_AI.requestModel]: model,
    [GEN_AI.responseModel]: event.response?.model,
    [GEN_AI.responseFinishReasons]: finish === undefined ? undefined : [finish],
    [ASM.llmOperation]: event.operation,
    [ASM.llmAttempt]: event.attempt,
    [ASM.llmWillRetry]: event.error === undefined ? undefined : event.willRetry,
    ...usageAttributes(usage),
    ...costAttributes(usage, event.response?.usage, event.money),
    [GEN_AI.inputMessages]: capture ? JSON.stringify(inputMessages(event.input)) : undefined,
    [GEN_AI.outputMessages]:
      capture && event.response !== undefined ? JSON.stringify(outputMessages(event.response, finish)) : undefined,
  });
}

/** The attributes of a tool call's `execute_tool` span. */
function toolAttributes(event: ToolCallEvent, capture: boolean): Attributes {
  return clean({
    [GEN_AI.operationName]: GEN_AI_OPERATION.executeTool,
    [GEN_AI.toolName]: event.call.name,
    [GEN_AI.toolCallId]: event.call.id,
    [GEN_AI.toolType]: 'function',
    [ASM.toolStatus]: event.status,
    [GEN_AI.toolCallArguments]: capture && event.call.input !== undefined ? safeJson(event.call.input) : undefined,
    [GEN_AI.toolCallResult]: capture ? event.result.output : undefined,
  });
}

/** The attributes a turn span gets at its end: outcome, usage, the budgets' spend, what stopped it. */
function turnEndAttributes(
  agent: TraceableAgent,
  result: AgentEvents['turnEnd'][0]['result'],
  capture: boolean,
): Attributes {
  const error = result.error as { limit?: unknown; used?: unknown; max?: unknown } | undefined;
  const u = result.usage;
  return clean({
    [ASM.outcome]: result.outcome,
    [ASM.transitions]: result.transitions,
    ...usageAttributes(u as Usage),
    [ASM.usageCostUsd]: u.costUsd,
    [ASM.usageUncertainUsd]: num(u.uncertainUsd),
    [ASM.usageReleasedUsd]: num(u.releasedUsd),
    [ASM.usageUnpricedCalls]: num(u.unpricedCalls),
    [ASM.usageLlmCalls]: u.llmCalls,
    [ASM.usageToolCalls]: u.toolCalls,
    [ASM.usageWallMs]: u.wallMs,
    ...budgetSpend(agent),
    [GEN_AI.outputMessages]:
      capture && result.text !== undefined
        ? JSON.stringify([
            { role: 'assistant', parts: [{ type: 'text', content: result.text }], finish_reason: 'stop' },
          ])
        : undefined,
    ...(result.outcome === 'budget_exceeded' && typeof error?.limit === 'string'
      ? { [ASM.budgetStoppedBy]: error.limit, [ASM.budgetUsed]: num(error.used), [ASM.budgetMax]: num(error.max) }
      : {}),
  });
}

type Value = string | number | boolean | string[] | undefined;

/** Drops undefined values: OpenTelemetry rejects them with a diagnostic. */
function clean(values: Record<string, Value>): Attributes {
  const out: Attributes = {};
  for (const [key, value] of Object.entries(values)) if (value !== undefined) out[key] = value;
  return out;
}

function usageAttributes(usage: Usage | undefined): Record<string, Value> {
  if (usage === undefined) return {};
  return {
    [GEN_AI.usageInputTokens]: int(usage.inputTokens),
    [GEN_AI.usageOutputTokens]: int(usage.outputTokens),
    [GEN_AI.usageCacheReadInputTokens]: int(usage.cachedInputTokens),
    [GEN_AI.usageCacheCreationInputTokens]: int(usage.cacheWriteTokens),
    [GEN_AI.usageReasoningOutputTokens]: int(usage.reasoningTokens),
  };
}

/**
 * A call's money in the three figures, under our own names (the conventions define no cost
 * attribute yet): billed, with `provider` when the response carried the cost and `local` when
 * `pricing` computed it; or uncertain / released, with why.
 */
function costAttributes(
  usage: Usage | undefined,
  reported: Usage | undefined,
  money: AttemptMoney | undefined,
): Record<string, Value> {
  if (money !== undefined && money.figure !== 'billed')
    return {
      [ASM.llmMoney]: money.figure,
      [money.figure === 'released' ? ASM.llmReleasedUsd : ASM.llmUncertainUsd]: num(money.usd),
      [ASM.llmMoneyWhy]: money.why,
    };
  const cost = num(usage?.costUsd);
  if (cost === undefined) return {};
  return {
    ...(money === undefined ? {} : { [ASM.llmMoney]: money.figure }),
    [ASM.llmBilledUsd]: cost,
    [ASM.llmCostSource]: num(reported?.costUsd) === undefined ? 'local' : 'provider',
  };
}

function budgetLimits(limits: object): Record<string, Value> {
  const out: Record<string, Value> = {};
  for (const [name, value] of Object.entries(limits))
    if (typeof value === 'number') out[`${ASM.budgetPrefix}${snakeCase(name)}`] = value;
  return out;
}

/** The agent's spend over all its turns, next to its limits. */
function budgetSpend(agent: TraceableAgent): Record<string, Value> {
  const u = agent.usage;
  return {
    [`${ASM.budgetPrefix}spent.cost_usd`]: u.costUsd,
    [`${ASM.budgetPrefix}spent.tokens`]: u.inputTokens + u.outputTokens,
    [`${ASM.budgetPrefix}spent.llm_calls`]: u.llmCalls,
    [`${ASM.budgetPrefix}spent.tool_calls`]: u.toolCalls,
    [`${ASM.budgetPrefix}spent.wall_ms`]: u.wallMs,
  };
}

/** `error.type`: the provider's status code when the error has one, else the error's class name. */
function failSpan(span: Span, error: unknown): void {
  const e = error as {
    status?: unknown;
    statusCode?: unknown;
    name?: unknown;
    constructor?: { name?: unknown };
  } | null;
  const status = typeof e === 'object' && e !== null ? (e.status ?? e.statusCode) : undefined;
  const type =
    typeof status === 'number'
      ? String(status)
      : typeof e === 'object' && e !== null && typeof e.name === 'string' && e.name !== ''
        ? e.name
        : '_OTHER';
  span.setAttribute(GEN_AI.errorType, type);
  if (error instanceof Error) span.recordException(error);
  span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
}

function inputMessages(input: LLMAttemptEvent['input']): unknown[] {
  if (input.kind === 'user_message') return [{ role: 'user', parts: [{ type: 'text', content: input.message }] }];
  return [
    {
      role: 'tool',
      parts: input.results.map((r) => ({ type: 'tool_call_response', id: r.callId, response: r.output })),
    },
    ...input.messages.map((m) => ({ role: 'user', parts: [{ type: 'text', content: m }] })),
  ];
}

function outputMessages(response: NonNullable<LLMAttemptEvent['response']>, finish: string | undefined): unknown[] {
  const parts: unknown[] = [];
  if (response.text !== undefined) parts.push({ type: 'text', content: response.text });
  for (const call of response.toolCalls ?? [])
    parts.push({ type: 'tool_call', id: call.id, name: call.name, arguments: call.input });
  return [
    {
      role: 'assistant',
      parts,
      finish_reason: finish ?? ((response.toolCalls?.length ?? 0) > 0 ? 'tool_call' : 'stop'),
    },
  ];
}

function safeJson(value: unknown): string {
  try {
    return typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
  } catch {
    return String(value);
  }
}

function int(value: number | undefined): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

function num(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}
