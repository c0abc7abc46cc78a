import type {
  AgentLoop,
  LLMCall,
  LLMCallBound,
  LLMResponse,
  OperationContext,
  ToolCall,
  ToolResult,
  Usage,
} from './AgentLoop';
import { InvalidArgumentError } from '../machine/InvalidArgumentError';
import { sleep as realSleep, type Sleep } from '../internal/sleep';

/** One canned LLM reply, consumed in order by `sendUserMessage` and `sendToolResults`. */
export interface ScriptedReply {
  text?: string;
  toolCalls?: ToolCall[];
  usage?: Usage;
  /** The model that answered (for `pricing`). */
  model?: string;
  /** How long the "LLM" takes; aborts through the signal. */
  delayMs?: number;
  /** Throw this instead of replying (a rate limit, a network error). */
  error?: string;
  /** Return this value as it is instead of a response — for testing contract checks. */
  raw?: unknown;
}

/** A canned tool: a fixed outcome, or a function for anything else. */
export type ScriptedTool =
  | { output?: string; isError?: boolean; error?: string; delayMs?: number; ignoreAbort?: boolean }
  | ((call: ToolCall, ctx: OperationContext) => Promise<ToolResult | string> | ToolResult | string);

/** What a scripted agent answers: its LLM replies in order, and its tools by name. */
export interface AgentScript {
  replies: ScriptedReply[];
  tools?: Record<string, ScriptedTool>;
  /** Commit ids returned by successive `checkGitCommits` calls; the operation exists only when given. */
  commits?: string[][];
  /** Messages `runAutoformatters` returns; the operation exists only when given. */
  formatterMessages?: string[];
  /** Messages returned by successive `gatherAdditionalMessages` calls; the operation exists only when given. */
  additionalMessages?: string[][];
  /** How delays wait. Default: real time. */
  sleep?: Sleep;
  /**
   * Gives the agent `llmCallBound` (for strict caps and the ledger): this bound for every
   * request, or a function of the call. A reply then stops at `ctx.maxOutputTokens` as a
   * provider does: its `usage.outputTokens` is cut to it, with finish reason `length`.
   */
  bound?: LLMCallBound | ((call: LLMCall, ctx: OperationContext) => LLMCallBound | Promise<LLMCallBound>);
  /**
   * The reply to a final call (`ctx.wrapUp`, under `budget.wrapUp`). Without it, a final call
   * takes the next reply, without its tool calls (a request with no tools gets none).
   */
  finalReply?: ScriptedReply;
}

/** A call the scripted agent received, for asserting what the adapter asked of it. */
export type ScriptedCall =
  | ({ op: 'sendUserMessage'; message: string; attempt: number; maxOutputTokens?: number } & Flags)
  | ({
      op: 'sendToolResults';
      results: ToolResult[];
      messages: string[];
      attempt: number;
      maxOutputTokens?: number;
    } & Flags)
  | { op: 'llmCallBound'; call: LLMCall }
  | { op: 'runTool'; call: ToolCall }
  | { op: 'checkGitCommits' }
  | { op: 'runAutoformatters'; commits: string[] }
  | { op: 'gatherAdditionalMessages' }
  | { op: 'acceptRecorded'; operation: 'sendUserMessage' | 'sendToolResults' };

/** The `AgentLoop` that `createScriptedAgent` returns, plus every call it received and how many replies are left. */
export interface ScriptedAgent extends AgentLoop {
  /** Every call received, in order. */
  readonly calls: ScriptedCall[];
  /** Replies not yet consumed. */
  readonly remaining: number;
}

/** The request flags a call carried (`ctx.wrapUp`, `ctx.budgetNote`), when set. */
type Flags = { wrapUp?: string; budgetNote?: string };

function capOf(ctx: OperationContext): { maxOutputTokens?: number } & Flags {
  const out: { maxOutputTokens?: number } & Flags = {};
  if (ctx.maxOutputTokens !== undefined) out.maxOutputTokens = ctx.maxOutputTokens;
  if (ctx.wrapUp !== undefined) out.wrapUp = ctx.wrapUp;
  if (ctx.budgetNote !== undefined) out.budgetNote = ctx.budgetNote;
  return out;
}

function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason : new Error(`aborted: ${String(reason)}`);
}

/**
 * An agent loop whose LLM replies, tools, commits and messages are canned: offline, no keys,
 * deterministic. For tests, demos and benchmarks of code that drives an `AgentLoop`.
 */
export function createScriptedAgent(script: AgentScript): ScriptedAgent {
  if (typeof script !== 'object' || script === null || !Array.isArray(script.replies)) {
    throw new InvalidArgumentError('script', 'an object with replies: ScriptedReply[]', script);
  }
  const wait = script.sleep ?? realSleep;
  const calls: ScriptedCall[] = [];
  let next = 0;
  let commitCalls = 0;
  let gatherCalls = 0;

  const delay = async (ms: number | undefined, signal: AbortSignal | undefined): Promise<void> => {
    if (ms === undefined || ms <= 0) return;
    await wait(ms, signal);
    if (signal?.aborted) throw abortError(signal);
  };

  const reply = async (ctx: OperationContext): Promise<LLMResponse> => {
    const final = ctx.wrapUp !== undefined;
    let r = final ? script.finalReply : undefined;
    if (r === undefined) {
      r = script.replies[next];
      if (r === undefined)
        throw new Error(`script exhausted: no reply ${next + 1} (the script has ${script.replies.length})`);
      next += 1;
      // A final call offers no tools, so its reply asks for none.
      if (final && r.toolCalls !== undefined) r = { ...r, toolCalls: undefined };
    }
    await delay(r.delayMs, ctx.signal);
    if (r.error !== undefined) throw new Error(r.error);
    if ('raw' in r) return r.raw as LLMResponse;
    const response: LLMResponse = {};
    if (r.text !== undefined) response.text = r.text;
    if (r.toolCalls !== undefined) response.toolCalls = r.toolCalls;
    if (r.usage !== undefined) response.usage = r.usage;
    if (r.model !== undefined) response.model = r.model;
    const cap = ctx.maxOutputTokens;
    if (cap !== undefined && r.usage?.outputTokens !== undefined && r.usage.outputTokens > cap) {
      response.usage = { ...r.usage, outputTokens: cap };
      response.finishReason = 'length';
    }
    return response;
  };

  const agent: ScriptedAgent = {
    // A scripted reply stands for whatever a request asks: it honours the final call and the budget note alike.
    honours: { wrapUp: true, budgetNote: true },
    calls,
    get remaining() {
      return script.replies.length - next;
    },
    sendUserMessage(message, ctx) {
      calls.push({ op: 'sendUserMessage', message, attempt: ctx.attempt ?? 1, ...capOf(ctx) });
      return reply(ctx);
    },
    sendToolResults(results, messages, ctx) {
      calls.push({ op: 'sendToolResults', results, messages, attempt: ctx.attempt ?? 1, ...capOf(ctx) });
      return reply(ctx);
    },
    // Resuming: a recorded response stands for the next reply of the script that answered (the
    // replies that failed before it were retried then), so the live part goes on from there.
    acceptRecorded(operation) {
      calls.push({ op: 'acceptRecorded', operation });
      while (script.replies[next] !== undefined && script.replies[next]!.error !== undefined) next += 1;
      if (script.replies[next] === undefined)
        return Promise.reject(new Error(`script exhausted: no reply ${next + 1} to stand for the recorded one`));
      next += 1;
      return Promise.resolve();
    },
    async runTool(call, ctx) {
      calls.push({ op: 'runTool', call });
      const tool = script.tools?.[call.name];
      if (tool === undefined) throw new Error(`unknown tool ${call.name}`);
      if (typeof tool === 'function') {
        const out = await tool(call, ctx);
        return typeof out === 'string' ? { callId: call.id, output: out } : out;
      }
      await delay(tool.delayMs, tool.ignoreAbort === true ? undefined : ctx.signal);
      if (tool.error !== undefined) throw new Error(tool.error);
      return {
        callId: call.id,
        output: tool.output ?? `${call.name} done`,
        ...(tool.isError === undefined ? {} : { isError: tool.isError }),
      };
    },
  };
  if (script.bound !== undefined) {
    const bound = script.bound;
    agent.llmCallBound = (call, ctx) => {
      calls.push({ op: 'llmCallBound', call });
      return typeof bound === 'function' ? bound(call, ctx) : { ...bound };
    };
  }
  if (script.commits !== undefined) {
    const commits = script.commits;
    agent.checkGitCommits = async () => {
      calls.push({ op: 'checkGitCommits' });
      return commits[commitCalls++] ?? [];
    };
  }
  if (script.formatterMessages !== undefined) {
    const messages = script.formatterMessages;
    agent.runAutoformatters = async (commits) => {
      calls.push({ op: 'runAutoformatters', commits });
      return messages;
    };
  }
  if (script.additionalMessages !== undefined) {
    const additional = script.additionalMessages;
    agent.gatherAdditionalMessages = async () => {
      calls.push({ op: 'gatherAdditionalMessages' });
      return additional[gatherCalls++] ?? [];
    };
  }
  return agent;
}
