// The names each entry point takes. assertKnownOptions checks each list against the type of the
// options it is given: a key added to the type and not here (or here and not in the type) fails
// the type check, so the lists cannot drift. (No import of those types here: it would be a cycle.)

/** The keys of `new AgentWithStateMachine(loop, options)`. */
export const AGENT_OPTION_KEYS = Object.freeze({
  maxHistorySize: true,
  clock: true,
  sink: true,
  table: true,
  approve: true,
  approvalTimeoutMs: true,
  compact: true,
  logger: true,
  budget: true,
  sharedBudgets: true,
  externalBudgets: true,
  retry: true,
  cancelGraceMs: true,
  toolConcurrency: true,
  pricing: true,
  onUnknownCost: true,
  billing: true,
  sleep: true,
  random: true,
  journal: true,
  ledger: true,
  ledgerDefaultMaxCostUsd: true,
  minOutputTokens: true,
  resumeFrom: true,
  resumeTools: true,
  stall: true,
});

/** The keys of `runTurn(input, options)`. */
export const RUN_TURN_OPTION_KEYS = Object.freeze({
  signal: true,
  budget: true,
});

/** The keys of `new StepMirror(options)`. */
export const MIRROR_OPTION_KEYS = Object.freeze({
  maxHistorySize: true,
  clock: true,
  sink: true,
  logger: true,
  budget: true,
  sharedBudgets: true,
  externalBudgets: true,
  pricing: true,
  onUnknownCost: true,
  billing: true,
  journal: true,
  signal: true,
  earlierSpend: true,
  resumeFrom: true,
  resumeTools: true,
  ledger: true,
  ledgerDefaultMaxCostUsd: true,
  stall: true,
  approvals: true,
  approve: true,
  approvalTimeoutMs: true,
  honours: true,
});

/**
 * The adapter options a framework's loop cannot honour through a mirror, each with why and what
 * to use instead. A framework task given one is refused by name rather than run without it.
 */
export const MIRROR_CANNOT: Readonly<Record<string, string>> = Object.freeze({
  table:
    'a framework run moves through the default table (its loop has no compaction or approval hook the mirror could drive)',
  compact: "the framework owns the conversation, so the mirror cannot compact it; use the framework's own trimming",
  retry: "the framework retries its own model calls; set them there (AI SDK `maxRetries`, the client's `maxRetries`)",
  toolConcurrency: 'the framework runs the tool calls of a response itself, as many at once as it chooses',
  minOutputTokens: "a strict cap cannot lower a framework's request: its maxOutputTokens is the framework's setting",
  cancelGraceMs: "the framework's own loop decides when a cancelled call stops",
  sleep: 'the framework waits between its own retries',
  random: 'the framework jitters its own retries',
  // Keys inside `budget` (and `perRun`, `total`), refused by refuseEndings unless the mirror's integration honours them.
  'budget.wrapUp':
    "this mirror's calls are made by the framework as it built them, so no final call with no tools can be made (mirrorAISDK makes one; elsewhere end the framework's loop yourself: AI SDK `stopWhen`, Agents SDK `maxTurns`, LangGraph `recursionLimit`)",
  'budget.visible':
    "this mirror's requests are built by the framework, so no note can be added to them (mirrorAISDK adds one)",
});
