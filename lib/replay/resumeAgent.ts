import type { AgentLoop } from '../agent/AgentLoop';
import { AgentWithStateMachine, type AgentWithStateMachineOptions } from '../agent/AgentWithStateMachine';
import type { ResumeInfo } from '../agent/journal/RunRecording';
import type { TurnResult } from '../agent/TurnResult';
import type { UsageDelta } from '../agent/UsageTotals';
import type { HistoryItem, JournalLineRead } from '../history/HistoryEntry';
import { loadHistory } from '../history/loadHistory';
import { runFacts, type RunUsage } from '../history/runFacts';
import { InvalidArgumentError } from '../machine/InvalidArgumentError';

/**
 * Options of `resumeAgent(history, loop, options)`: the adapter's options (a `sink` for the new
 * history, budgets, `resumeTools` for which recorded tool calls run again, …), plus these.
 */
export interface ResumeAgentOptions extends Omit<AgentWithStateMachineOptions, 'resumeFrom'> {
  /** The user message of each turn to run, in order. Default: the ones the journal recorded. */
  inputs?: readonly string[];
}

/** What `resumeAgent` gives back: the agent (to go on with), how each turn ended, and how it resumed. */
export interface ResumedAgent {
  agent: AgentWithStateMachine;
  /** One per input, in order: the last is the turn that was cut off, now finished. */
  results: TurnResult[];
  resumed: ResumeInfo;
}

/**
 * Resumes a single agent's interrupted run from its history file (written with `journal: true`):
 * a new `AgentWithStateMachine` on `loop` runs the recorded turns again, each recorded LLM
 * response handed to the loop's `acceptRecorded` with no request made, so that the loop
 * rebuilds its conversation; the cut-off turn then goes live and runs to its end. Recorded tool
 * calls follow `resumeTools`. The run's earlier spend counts in the agent's usage and budget. A loop
 * without `acceptRecorded` is restarted from the beginning (`resumed.mode` says which). Pass a
 * `sink` to write the resumed run's history (to a new file: the old one is the record of the
 * interrupted attempt).
 */
export async function resumeAgent(
  history: string | { readonly journal: readonly JournalLineRead[]; readonly entries?: readonly HistoryItem[] },
  loop: AgentLoop,
  options: ResumeAgentOptions = {},
): Promise<ResumedAgent> {
  if (typeof options !== 'object' || options === null) throw new InvalidArgumentError('options', 'an object', options);
  const loaded = typeof history === 'string' ? await loadHistory(history) : history;
  if (typeof loaded !== 'object' || loaded === null || !Array.isArray(loaded.journal))
    throw new InvalidArgumentError(
      'history',
      'a history file path, or a loaded history { journal, entries } (loadHistory(file))',
      history,
    );
  if ((options as { tools?: unknown }).tools !== undefined)
    throw new InvalidArgumentError(
      'options.tools',
      'left out: the tool policy is the option `resumeTools`, as on runBatch() and the adapter',
      (options as { tools: unknown }).tools,
    );
  const { inputs = recordedInputs(loaded.journal), ...adapterOptions } = options;
  if (!Array.isArray(inputs) || !inputs.every((i) => typeof i === 'string'))
    throw new InvalidArgumentError('options.inputs', 'an array of user messages', inputs);
  const usage = loaded.entries === undefined ? undefined : usageOf(runFacts(loaded.entries).finalUsage);
  const agent = new AgentWithStateMachine(loop, {
    ...adapterOptions,
    resumeFrom: {
      journal: loaded.journal,
      ...(usage === undefined ? {} : { usage }),
    },
  });
  const results: TurnResult[] = [];
  for (const input of inputs) results.push(await agent.runTurn(input));
  return { agent, results, resumed: agent.resumed! };
}

/** The user message of each recorded turn, in order. */
export function recordedInputs(journal: readonly JournalLineRead[]): string[] {
  const byTurn = new Map<number, string>();
  for (const j of journal) {
    if (j.type !== 'llm' || j.operation !== 'sendUserMessage' || byTurn.has(j.turn)) continue;
    const message = (j.input as { message?: unknown } | undefined)?.message;
    if (typeof message === 'string') byTurn.set(j.turn, message);
  }
  return [...byTurn.entries()].sort((a, b) => a[0] - b[0]).map(([, m]) => m);
}

/** A file's spend as a charge. */
export function usageOf(run: RunUsage | null): UsageDelta | undefined {
  if (run === null) return undefined;
  return {
    costUsd: run.costUsd,
    inputTokens: run.inputTokens,
    outputTokens: run.outputTokens,
    llmCalls: run.llmCalls,
    toolCalls: run.toolCalls,
  };
}
