import type { LLMCallInput } from '../agent/AgentEvents';
import type { AgentLoop, LLMResponse, Pricing, ToolCall, ToolResult } from '../agent/AgentLoop';
import { recordedCallDiffers } from '../agent/journal/recordedCallDiffers';
import type { RetryOptions } from '../agent/retry/retryDelay';
import type { JournalLineRead } from '../history/HistoryEntry';
import { InvalidArgumentError } from '../machine/InvalidArgumentError';
import { ReplayDivergedError } from './ReplayDivergedError';
import { ReplayFeed } from './ReplayFeed';

/** What `replayLoop` gives: the loop, and the retry policy under which it replays the recorded attempts as they happened. */
export interface ReplayedLoop {
  /** Answers every LLM call and tool call from the journal; makes no request and runs no tool. */
  loop: AgentLoop;
  /**
   * Retry exactly as the recorded run did: an attempt is retried when the journal holds the
   * next attempt of the same call, and never waits. Pass it as the adapter's `retry`.
   */
  retry: RetryOptions;
  /** The user message of each recorded turn, in order: what to pass to `runTurn`. */
  inputs: string[];
  /** Prices each replayed response at its recorded cost (a response priced by `pricing` carries none of its own). Pass it as the adapter's `pricing`. */
  pricing: Pricing;
  /** LLM attempts answered so far. */
  readonly llmCalls: number;
  /** Why the replay stopped following the journal, once it has. */
  readonly diverged: ReplayDivergedError | undefined;
}

/**
 * An `AgentLoop` that answers from a run's journal (`loadHistory(file).journal`): each LLM
 * attempt gets the recorded response, or throws the recorded error (with its status and code,
 * so retry decisions come out the same), and each tool call gets the recorded result. A request
 * that differs from the recording stops with `ReplayDivergedError` ("diverged at LLM call N"),
 * naming what differed. It costs nothing and needs no network: the way to re-run a failed run,
 * with a debugger, and see the same moves.
 */
export function replayLoop(journal: readonly JournalLineRead[]): ReplayedLoop {
  if (!Array.isArray(journal))
    throw new InvalidArgumentError(
      'journal',
      'the journal lines of a history file (loadHistory(file).journal)',
      journal,
    );
  const feed = ReplayFeed.ofArrays({ records: [], journal }, () => undefined);
  if (feed.llmLines === 0) throw noLLMCall(journal);
  const inputs: string[] = [];
  for (let input = feed.inputs.shift(); input !== undefined; input = feed.inputs.shift()) inputs.push(input);
  const { loop, retry, pricing, state } = replayFeedLoop(feed);
  return {
    loop,
    retry,
    inputs,
    pricing,
    get llmCalls() {
      return state.llmCalls;
    },
    get diverged() {
      return state.diverged;
    },
  };
}

/** What a journal without an LLM line is refused with. */
export function noLLMCall(journal: readonly JournalLineRead[]): InvalidArgumentError {
  return new InvalidArgumentError(
    'journal',
    'a journal with at least one LLM call (was the run written with journal: true?)',
    journal,
  );
}

/**
 * `replayLoop` on a feed, which may still be reading its file: each answer first reads as far
 * as the line it needs and one LLM line past it (the retry decision, which cannot wait, looks at
 * what follows), and takes its lines off the feed's queues, so nothing answered is kept.
 */
export function replayFeedLoop(feed: ReplayFeed): Pick<ReplayedLoop, 'loop' | 'retry' | 'pricing'> & {
  state: { llmCalls: number; diverged: ReplayDivergedError | undefined };
} {
  const state: { llmCalls: number; diverged: ReplayDivergedError | undefined } = {
    llmCalls: 0,
    diverged: undefined,
  };
  /** The last LLM line answered. */
  let previous: JournalLineRead | undefined;
  const diverge = (error: ReplayDivergedError): Promise<never> => Promise.reject((state.diverged ??= error));

  const answer = async (
    operation: 'sendUserMessage' | 'sendToolResults',
    input: LLMCallInput,
  ): Promise<LLMResponse> => {
    const n = state.llmCalls + 1;
    await feed.readUntil(() => feed.llm.length >= 2);
    const entry = feed.llm.peek();
    if (entry === undefined)
      return diverge(
        new ReplayDivergedError(
          n,
          `${operation} asked for a call the journal does not have (it holds ${feed.llmLines})`,
        ),
      );
    const difference = recordedCallDiffers(entry, operation, input);
    if (difference !== undefined) return diverge(new ReplayDivergedError(n, difference));
    feed.llm.shift();
    previous = entry;
    state.llmCalls += 1;
    if (entry.redactError !== undefined)
      return diverge(
        new ReplayDivergedError(n, `the journal kept no content for this call (${String(entry.redactError)})`),
      );
    const error = entry.error as { name?: string; message?: string; status?: number; code?: string } | undefined;
    if (error !== undefined)
      throw Object.assign(new Error(error.message ?? 'recorded error'), {
        name: error.name ?? 'Error',
        status: error.status,
        code: error.code,
        // An answer the loop refused, billed at its usage: charged again at the cost it was recorded at.
        ...(entry.usage !== undefined && {
          answeredUsage: entry.costUsd === undefined ? entry.usage : { ...entry.usage, costUsd: entry.costUsd },
        }),
      });
    // A copy: the adapter and the caller may keep what they are given.
    return structuredClone(entry.response) as LLMResponse;
  };

  const loop: AgentLoop = {
    sendUserMessage: (message) => answer('sendUserMessage', { kind: 'user_message', message }),
    sendToolResults: (results, messages) => answer('sendToolResults', { kind: 'tool_results', results, messages }),
    runTool: async (call: ToolCall): Promise<ToolResult> => {
      await feed.readUntil(() => feed.tools.length > 0);
      const entry = feed.tools.peek();
      if (entry === undefined || entry.call?.id !== call.id || entry.call?.name !== call.name) {
        const recorded = entry === undefined ? 'none' : `${entry.call?.name} (${entry.call?.id})`;
        return diverge(
          new ReplayDivergedError(
            state.llmCalls,
            `tool call ${call.name} (${call.id}) is not the next one recorded (${recorded})`,
          ),
        );
      }
      feed.tools.shift();
      return structuredClone(entry.result) as ToolResult;
    },
  };
  return {
    loop,
    retry: {
      // Never reached: shouldRetry says when to stop, at the journal's last attempt of the call.
      retries: Number.MAX_SAFE_INTEGER,
      baseDelayMs: 0,
      maxDelayMs: 0,
      delayMs: () => 0,
      // Retried as it was: when the journal's next attempt is the same call's next one.
      shouldRetry: (error) => {
        if (error instanceof ReplayDivergedError) return false;
        const following = feed.llm.peek();
        return (
          following !== undefined &&
          previous !== undefined &&
          following.attempt === (previous.attempt ?? 1) + 1 &&
          following.operation === previous.operation
        );
      },
    },
    pricing: () => {
      const cost = previous?.costUsd;
      return typeof cost === 'number' ? cost : undefined;
    },
    state,
  };
}
