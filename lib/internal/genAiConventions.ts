/**
 * The OpenTelemetry names every span of this library uses, pinned in one place: the live
 * tracer (`agent-state-machine/otel`) and the history → OTLP export (`agent-sm export otlp`)
 * both read them from here, so a trace looks the same live and rebuilt from a file.
 *
 * Source: the GenAI semantic conventions (status: development) as last published in
 * open-telemetry/semantic-conventions (docs/gen-ai/gen-ai-spans.md, gen-ai-agent-spans.md,
 * docs/registry/attributes/gen-ai.md at commit 7b0c0fe1e, 2026-04-27) before they moved to
 * open-telemetry/semantic-conventions-genai. `gen_ai.system` is deprecated there in favour of
 * `gen_ai.provider.name`; the cache and reasoning token attributes are the registry's.
 *
 * Cost has no attribute in the conventions yet (a `gen_ai.usage.cost.*` is proposed, in
 * semantic-conventions-genai pull request 443, not merged). Until it is, the money of a call sits
 * in our own namespace (`ASM.llm*Usd`), split into the three figures, so that no attribute we
 * emit claims a conventions name the registry does not define.
 */
export const GEN_AI = {
  operationName: 'gen_ai.operation.name',
  providerName: 'gen_ai.provider.name',
  agentName: 'gen_ai.agent.name',
  workflowName: 'gen_ai.workflow.name',
  conversationId: 'gen_ai.conversation.id',
  requestModel: 'gen_ai.request.model',
  responseModel: 'gen_ai.response.model',
  responseFinishReasons: 'gen_ai.response.finish_reasons',
  usageInputTokens: 'gen_ai.usage.input_tokens',
  usageOutputTokens: 'gen_ai.usage.output_tokens',
  usageCacheReadInputTokens: 'gen_ai.usage.cache_read.input_tokens',
  usageCacheCreationInputTokens: 'gen_ai.usage.cache_creation.input_tokens',
  usageReasoningOutputTokens: 'gen_ai.usage.reasoning.output_tokens',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  toolType: 'gen_ai.tool.type',
  toolCallArguments: 'gen_ai.tool.call.arguments',
  toolCallResult: 'gen_ai.tool.call.result',
  inputMessages: 'gen_ai.input.messages',
  outputMessages: 'gen_ai.output.messages',
  /** Stable, from the general conventions. */
  errorType: 'error.type',
  /** Stable, from the general conventions: a failed attempt's message, on its span event. */
  exceptionMessage: 'exception.message',
} as const;

/** The attribute types of the conventions' registry (`type:` in its YAML models). */
export type RegistryType = 'string' | 'int' | 'double' | 'boolean' | 'string[]' | 'any';

/**
 * The registry's type of every attribute in `GEN_AI`, as `model/gen-ai/registry.yaml` and
 * `model/error/registry.yaml` of open-telemetry/semantic-conventions give it (the registry
 * `@opentelemetry/semantic-conventions` 1.45.0 publishes as its `ATTR_*` constants; the package
 * carries the names, not the types). `any` is a structured value: we write it as a JSON string.
 * `test/internal/genAiConventions.test.ts` holds every name here to the package's constants, and
 * every type (and enum value) to those YAML models, vendored in `test/fixtures/semconv/`.
 */
export const GEN_AI_TYPES: Readonly<Record<(typeof GEN_AI)[keyof typeof GEN_AI], RegistryType>> = {
  [GEN_AI.operationName]: 'string',
  [GEN_AI.providerName]: 'string',
  [GEN_AI.agentName]: 'string',
  [GEN_AI.workflowName]: 'string',
  [GEN_AI.conversationId]: 'string',
  [GEN_AI.requestModel]: 'string',
  [GEN_AI.responseModel]: 'string',
  [GEN_AI.responseFinishReasons]: 'string[]',
  [GEN_AI.usageInputTokens]: 'int',
  [GEN_AI.usageOutputTokens]: 'int',
  [GEN_AI.usageCacheReadInputTokens]: 'int',
  [GEN_AI.usageCacheCreationInputTokens]: 'int',
  [GEN_AI.usageReasoningOutputTokens]: 'int',
  [GEN_AI.toolName]: 'string',
  [GEN_AI.toolCallId]: 'string',
  [GEN_AI.toolType]: 'string',
  [GEN_AI.toolCallArguments]: 'any',
  [GEN_AI.toolCallResult]: 'any',
  [GEN_AI.inputMessages]: 'any',
  [GEN_AI.outputMessages]: 'any',
  [GEN_AI.errorType]: 'string',
  [GEN_AI.exceptionMessage]: 'string',
};

/** The namespace of our own attributes and events (`ASM`): everything outside the conventions. */
export const ASM_NAMESPACE = 'agent_state_machine.';

/** Values of `gen_ai.operation.name`, which also start the span names. */
export const GEN_AI_OPERATION = {
  invokeAgent: 'invoke_agent',
  invokeWorkflow: 'invoke_workflow',
  chat: 'chat',
  executeTool: 'execute_tool',
} as const;

/** `gen_ai.provider.name` when the caller does not say: the conventions' fallback value. */
export const GEN_AI_PROVIDER_OTHER = '_OTHER';

/** `error.type` when nothing more specific is known: the conventions' fallback value. */
export const ERROR_TYPE_OTHER = '_OTHER';

/** Our own attributes and events, outside `gen_ai.*`: the machine's moves, the outcome and the budgets. */
export const ASM = {
  turn: 'agent_state_machine.turn',
  outcome: 'agent_state_machine.outcome',
  transitions: 'agent_state_machine.transitions',
  runId: 'agent_state_machine.run.id',
  llmOperation: 'agent_state_machine.llm.operation',
  llmAttempt: 'agent_state_machine.llm.attempt',
  llmAttempts: 'agent_state_machine.llm.attempts',
  llmWillRetry: 'agent_state_machine.llm.will_retry',
  /** Which of the three figures a `chat` span's money is: `billed`, `uncertain`, `released` or `unknown`. */
  llmMoney: 'agent_state_machine.llm.money',
  /** Why a `chat` span's money is uncertain, released or unknown. */
  llmMoneyWhy: 'agent_state_machine.llm.money.reason',
  /** A `chat` span's billed US dollars: priced from the usage the provider reported, or its own cost figure. */
  llmBilledUsd: 'agent_state_machine.llm.billed_usd',
  /** Where a `chat` span's billed dollars come from: `provider` (the response said) or `local` (`pricing`). */
  llmCostSource: 'agent_state_machine.llm.cost_source',
  /** A `chat` span's uncertain US dollars: the call may have been billed and reported no usage; held at its worst case. */
  llmUncertainUsd: 'agent_state_machine.llm.uncertain_usd',
  /** A `chat` span's released US dollars: held, then let go, because the call was provably not billed. */
  llmReleasedUsd: 'agent_state_machine.llm.released_usd',
  toolStatus: 'agent_state_machine.tool.status',
  /** The turn's (or batch's) cost in US dollars, billed + uncertain; a `chat` span's own money is `llm.*_usd`, so a sum over spans of one name counts a dollar once. */
  usageCostUsd: 'agent_state_machine.usage.cost_usd',
  /**
   * Of `usage.cost_usd` (billed + uncertain, what caps count), the uncertain part: requests that
   * may have been billed but reported no usage, charged at their hold. Billed is the rest.
   */
  usageUncertainUsd: 'agent_state_machine.usage.uncertain_usd',
  /** US dollars held and let go: requests provably not billed; in no cap, not in `usage.cost_usd`. */
  usageReleasedUsd: 'agent_state_machine.usage.released_usd',
  /** LLM calls that may have been billed at a cost nobody knows (no price, no hold): in none of the dollars, never $0. */
  usageUnpricedCalls: 'agent_state_machine.usage.unpriced_calls',
  usageToolCalls: 'agent_state_machine.usage.tool_calls',
  usageLlmCalls: 'agent_state_machine.usage.llm_calls',
  usageWallMs: 'agent_state_machine.usage.wall_ms',
  /** Prefix of the limits: `agent_state_machine.budget.max_cost_usd`, … */
  budgetPrefix: 'agent_state_machine.budget.',
  /** Which limit stopped the turn (`maxCostUsd`, …), with the used and max figures. */
  budgetStoppedBy: 'agent_state_machine.budget.stopped_by',
  budgetUsed: 'agent_state_machine.budget.used',
  budgetMax: 'agent_state_machine.budget.max',
  /** The span event of one move of the machine, on the turn span. */
  transitionEvent: 'agent_state_machine.transition',
  transitionFrom: 'agent_state_machine.transition.from',
  transitionTo: 'agent_state_machine.transition.to',
  transitionSeq: 'agent_state_machine.transition.seq',
  transitionForced: 'agent_state_machine.transition.forced',
  transitionDescription: 'agent_state_machine.transition.description',
} as const;

/** The instrumentation scope of every span. */
export const INSTRUMENTATION_SCOPE = 'agent-state-machine';

/** `maxCostUsd` → `max_cost_usd`, for budget attribute names. */
export function snakeCase(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** A span name per the conventions: `{operation} {subject}`, or the operation alone when the subject is unknown. */
export function spanName(operation: string, subject: string | undefined): string {
  return subject === undefined || subject === '' ? operation : `${operation} ${subject}`;
}
