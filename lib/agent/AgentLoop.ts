import type { TurnOutcome } from './TurnOutcome';

/**
 * Token and cost figures one LLM response reports. All optional, and each accepts `undefined`,
 * so an SDK's values pass straight through: report what your SDK gives.
 *
 * `inputTokens` counts every input token, cached or not; `cachedInputTokens` (read from the
 * provider's prompt cache) and `cacheWriteTokens` (written to it) are parts of it.
 * `outputTokens` counts every output token; `reasoningTokens` are part of it.
 */
export interface Usage {
  inputTokens?: number | undefined;
  outputTokens?: number | undefined;
  /** Input tokens read from the prompt cache: part of `inputTokens`. */
  cachedInputTokens?: number | undefined;
  /** Input tokens written to the prompt cache: part of `inputTokens`. */
  cacheWriteTokens?: number | undefined;
  /** Output tokens spent on reasoning: part of `outputTokens`. */
  reasoningTokens?: number | undefined;
  /** What the response cost in US dollars, when the provider says. Otherwise `pricing` computes it from the tokens. */
  costUsd?: number | undefined;
  /** Uses of tools the provider ran itself during the request, which it bills per use beside the tokens. */
  serverToolUses?: ServerToolUses | undefined;
}

/**
 * Uses of tools a provider runs on its side within one request (server tools), by kind: each
 * is billed per use, and its results grow the request's input. In a response's `Usage`, the
 * uses it made; in an `LLMCallBound`, the most it may make.
 */
export interface ServerToolUses {
  /** Web searches (Anthropic `web_search`, OpenAI Responses `web_search`). */
  webSearch?: number | undefined;
  /** Web pages fetched (Anthropic `web_fetch`). */
  webFetch?: number | undefined;
  /** Code runs (Anthropic `code_execution`). */
  codeExecution?: number | undefined;
}

/** A tool call the LLM asked for. */
export interface ToolCall {
  id: string;
  name: string;
  input?: unknown;
}

/** What a tool produced, sent back to the LLM. */
export interface ToolResult {
  callId: string;
  output: string;
  isError?: boolean | undefined;
}

/** One LLM response: text, tool calls, or both. No tool calls ends the turn. */
export interface LLMResponse {
  text?: string | undefined;
  toolCalls?: ToolCall[] | undefined;
  usage?: Usage | undefined;
  /** The model that answered, as the provider names it (used by `pricing`, kept in the history). */
  model?: string | undefined;
  /** Why the model stopped (`stop`, `tool_calls`, `end_turn`, `length`, …), as the provider says it. */
  finishReason?: string | undefined;
}

/** Handed to every operation: abort what you are doing when `signal` fires. */
export interface OperationContext {
  signal: AbortSignal;
  /** 1 for the first turn of this adapter. */
  turn: number;
  /** For LLM calls: 1 for the first attempt, 2 for the first retry, … */
  attempt?: number;
  /**
   * For LLM calls under a strict cost cap with little left: ask for at most this many output
   * tokens (lower the request's max output tokens to it). A loop that implements
   * `llmCallBound` must honour it.
   */
  maxOutputTokens?: number;
  /**
   * For LLM calls (and their `llmCallBound`) under `budget.wrapUp`: this is the run's final
   * call. Offer no tools, and add this instruction as the last user message of the request (keep
   * it in the conversation, with the answer). Set only for a loop whose `honours.wrapUp` is true
   * (it makes the final call the budget asks for).
   */
  wrapUp?: string;
  /**
   * With `wrapUp`, on a final call sending tool results that would not fit in the hold kept for
   * it even with the results answered as the budget running out: send the conversation as it
   * stood before the last response (that response, and the results of its tool calls, left
   * out), then the instruction, and count it so in the bound. A loop that leaves it unhonoured
   * bounds the call whole, and the run ends `budget_exceeded` when that does not fit.
   */
  withoutLastRound?: true;
  /**
   * For LLM calls (and their `llmCallBound`) under `budget.visible`: a short note of what is left
   * of the budget. Add it to this request alone (do not keep it in the conversation), and count
   * its tokens in the bound. Set only for a loop whose `honours.budgetNote` is true.
   */
  budgetNote?: string;
}

/**
 * What a loop of your own says it does with the optional request flags of `OperationContext`.
 * Each `true` is a promise the adapter relies on; a budget that needs one left unset is refused
 * when the adapter is made.
 */
export interface LoopHonours {
  /**
   * `true`: the loop makes the final call the budget asks for. When `ctx.wrapUp` is set, the
   * loop sends that call with no tools and the instruction `ctx.wrapUp` holds as its last user message — without the last
   * round when `ctx.withoutLastRound` is set — so the run ends with an answer within its cap.
   * `budget.wrapUp` needs it.
   */
  wrapUp?: boolean;
  /**
   * `true`: the loop adds the budget note to its requests. When `ctx.budgetNote` is set, the loop
   * sends it with that request and counts its tokens in `llmCallBound`. `budget.visible` needs it.
   */
  budgetNote?: boolean;
}

/** The LLM call a loop is about to make, as `llmCallBound` is asked about it. */
export type LLMCall =
  | { operation: 'sendUserMessage'; message: string }
  | {
      operation: 'sendToolResults';
      results: ToolResult[];
      /** The extra user messages to send after the tool results (`sendToolResults`'s `extraUserMessages`). */
      messages: string[];
    };

/**
 * The most one LLM request may use: input tokens never below the provider's count of the
 * request (system prompt, tool definitions and per-message overheads included), and the
 * request's max output tokens. With `pricing`, the call's worst-case cost.
 */
export interface LLMCallBound {
  inputTokens: number;
  maxOutputTokens: number;
  /** The model the request names, for `pricing`. */
  model?: string | undefined;
  /**
   * The most uses of server tools the request may make (a web search tool's `max_uses`): priced
   * into its worst case at their fees. Their results belong in `inputTokens`.
   */
  serverToolUses?: ServerToolUses | undefined;
}

/** Why `settleToolCalls` is called: how the turn ended, and why. */
export interface SettleInfo {
  outcome: TurnOutcome;
  /** Why the turn ended without sending these results: the cancel reason, the spent limit, the error. */
  reason: string;
  turn: number;
}

/** What `compact` is told: which call overflowed the model's context, and how. */
export interface CompactInfo {
  operation: 'sendUserMessage' | 'sendToolResults';
  /** The provider's error (see `isContextOverflow`). */
  error: unknown;
  turn: number;
}

/** What a hook's LLM call is given: abort when `signal` fires; ask for at most `maxOutputTokens` when set. */
export interface BudgetedCallContext {
  signal: AbortSignal;
  /** Set when a strict cap lowered the call's max output tokens to what fits: honour it. */
  maxOutputTokens?: number;
}

/**
 * The run's budgets, for an LLM call a hook makes (`compact` summarising the conversation): the
 * same gate, hold and charge as the adapter's own calls. The call's worst case is held before it
 * starts and it is charged after: its reported usage, priced, else its whole hold.
 */
export interface BudgetedLLM {
  /**
   * Makes one LLM call under the run's budgets. `bound` is the request's bound (input tokens
   * never below the provider's count, its max output tokens, its model, as `llmCallBound` says
   * it); `call` makes the request and resolves to something with the `usage` (and `model`) the
   * provider reported. Throws `BudgetExceededError` without calling when the budgets have no room
   * for it; the run then ends `budget_exceeded`.
   */
  call<R extends { usage?: Usage | undefined; model?: string | undefined }>(
    bound: LLMCallBound,
    call: (ctx: BudgetedCallContext) => Promise<R>,
  ): Promise<R>;
}

/** What `compact` is handed: the operation's context, and the run's budgets for its LLM calls. */
export interface HookContext extends OperationContext {
  /** Make every LLM call of the compaction through it: a strict cap holds it before it starts. */
  llm: BudgetedLLM;
}

/** What `runTool` is handed: the operation's context and, when the adapter runs the tool, the run's budgets for its LLM calls. */
export interface ToolContext extends OperationContext {
  /** Make every LLM call of the tool through it: a strict cap holds it before it starts. Set by the adapter. */
  llm?: BudgetedLLM;
}

/**
 * What a compaction did. A summarising LLM call made outside `ctx.llm` reports its `usage` (and
 * `model`), charged after the fact (refused under a strict cap, which cannot hold it).
 */
export interface CompactResult {
  usage?: Usage | undefined;
  model?: string | undefined;
  /** How many messages the conversation lost (for the record). */
  removedMessages?: number | undefined;
}

/**
 * Computes the cost in US dollars of one response from its tokens, when the response does
 * not report `costUsd`. Return `undefined` for a model you have no price for: the adapter then
 * applies its unknown-cost rule instead of charging $0.
 */
export type Pricing = (usage: Usage, info: { model: string | undefined }) => number | undefined;

/**
 * The operations an agent loop already has. The adapter calls them in the order of the
 * sixteen-state flow; the conversation and its message format stay yours.
 *
 * An LLM operation (`sendUserMessage`, `sendToolResults`) may be called again with the same
 * arguments after it failed (a retry): add messages to your conversation only after the call
 * that carries them succeeded, so a retry never sends them twice.
 */
export interface AgentLoop {
  /**
   * What this loop does with the request flags of `OperationContext`: `{ wrapUp: true }` — it
   * makes the final call the budget asks for; `{ budgetNote: true }` — it adds the budget note to
   * its requests. A budget that needs one the loop does not promise is refused when the adapter
   * is made.
   */
  readonly honours?: LoopHonours;
  /** Sends the user's message (with whatever history you keep) and returns the LLM's response. */
  sendUserMessage(message: string, ctx: OperationContext): Promise<LLMResponse>;
  /**
   * Sends the tool results, then `extraUserMessages`, in one request, and returns the next
   * response.
   *
   * @param results - The results of the response's tool calls, one per call, in its order.
   * @param extraUserMessages - The extra user messages to send after the tool results, in order:
   *   what `runAutoformatters` and `gatherAdditionalMessages` returned this round (often none).
   *   Send each as a user message after the results, and keep them in the conversation.
   * @param ctx - The request's flags (`signal`, `maxOutputTokens`, `wrapUp`, …).
   */
  sendToolResults(results: ToolResult[], extraUserMessages: string[], ctx: OperationContext): Promise<LLMResponse>;
  /**
   * Runs one tool call. A throw becomes an error result sent to the LLM; the turn goes on. A
   * tool that calls an LLM makes the call through `ctx.llm`, so the run's budgets hold it; one
   * they refuse is not made, and no further tool of the response starts.
   */
  runTool(call: ToolCall, ctx: ToolContext): Promise<ToolResult>;
  /** New commit ids since the last check. */
  checkGitCommits?(ctx: OperationContext): Promise<string[]>;
  /** Runs formatters on the new commits; returns messages for the LLM, if any. */
  runAutoformatters?(commits: string[], ctx: OperationContext): Promise<string[] | void>;
  /** User messages that arrived while tools ran. */
  gatherAdditionalMessages?(ctx: OperationContext): Promise<string[]>;
  /**
   * Answers the tool calls of a turn that ended before their results were sent (cancelled,
   * stopped by a budget, failed), so the conversation stays valid for the next turn: most
   * providers reject a conversation whose tool calls have no results. Called at most once per
   * turn, with one result per requested call in call order: the real result of every tool that
   * finished, and `isError: true` with `interrupted: <reason>` or `not run: <reason>` for the
   * rest. Record them in your conversation; make no LLM call.
   */
  settleToolCalls?(results: ToolResult[], info: SettleInfo, ctx: OperationContext): Promise<void>;
  /**
   * The bound of the request the next `sendUserMessage` / `sendToolResults` (with these
   * arguments) would send: input tokens never below the provider's count, and its max output
   * tokens (with `ctx.maxOutputTokens` applied). Asked before each attempt when a budget is
   * `strict` or the money ledger is on; a strict cap needs it. Make no request here.
   */
  llmCallBound?(call: LLMCall, ctx: OperationContext): LLMCallBound | Promise<LLMCallBound>;
  /**
   * Takes an LLM response recorded by an earlier, interrupted run of this conversation, in
   * place of making the request: resuming a run (`resumeFrom`, `resumeAgent`, `runBatch`'s
   * `resume`) re-drives the recorded calls through it, then goes live. Add to your conversation
   * exactly what the call would have added had it been made (the request's messages — the user
   * message, or the tool results and extra messages of `input` — then the assistant message of
   * `response`, its text and tool calls), so that the next live request is valid. Make no
   * request. A throw ends the turn in Error. A loop without this operation is restarted from
   * the beginning when resumed, with its earlier spend still counted.
   */
  acceptRecorded?(
    operation: 'sendUserMessage' | 'sendToolResults',
    input:
      { kind: 'user_message'; message: string } | { kind: 'tool_results'; results: ToolResult[]; messages: string[] },
    response: LLMResponse,
    ctx: OperationContext,
  ): Promise<void>;
  /**
   * Shortens the conversation after a call failed because it was longer than the model's
   * context (the adapter's `compact` option): drop or summarise the oldest turns, keeping each
   * tool call with its result. The call that overflowed is then made once more, with the same
   * arguments. Make a summarising LLM call through `ctx.llm` (the run's budgets hold it), and
   * say so with `compactCalls`.
   */
  compact?(info: CompactInfo, ctx: HookContext): Promise<CompactResult | void>;
  /**
   * What LLM calls `compact` makes: `'none'` (it only drops messages) or `'budgeted'` (every
   * call goes through `ctx.llm`). A strict cap with the `compact` option needs it said, else the
   * adapter is refused when made: a compaction that calls an LLM unseen would pass the cap.
   */
  readonly compactCalls?: 'none' | 'budgeted';
}
