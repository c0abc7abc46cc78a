import { isHistoryEntry, type HistoryItem, type HistoryMeta, type RejectedMove } from '../history/HistoryEntry';
import { RunFactsCollector, type RunUsage, type UsagePoint } from '../history/runFacts';
import { HistorySummarizer, type HistorySummary } from '../history/summarizeHistory';
import type { TransitionRecord } from '../machine/TransitionRecord';
import { tableStates, type TransitionTable } from '../machine/TransitionTable';
import { DEFAULT_TABLE } from '../machine/transitions';

/** How a state is drawn: the colour family of its bars on a timeline. */
export type StateKind = 'idle' | 'llm' | 'tool' | 'check' | 'end' | 'error' | 'other';

// The sixteen states by what they spend time on; a custom state gets its kind from the table's flags.
const KINDS: Readonly<Record<string, StateKind>> = {
  Ready: 'idle',
  WaitingForUserInput: 'idle',
  SendingToLLM: 'llm',
  ProcessingLLMResponse: 'llm',
  SendingToolResults: 'llm',
  ToolUseRequested: 'tool',
  RunningTool: 'tool',
  RunningAutoformatters: 'tool',
  CheckingForCancellation: 'check',
  CheckingGitCommits: 'check',
  CheckingBudget: 'check',
  GatheringAdditionalMessages: 'check',
  EndOfTurn: 'end',
  Cancelled: 'error',
  BudgetExceeded: 'error',
  Error: 'error',
};

/** What a report needs of one run, gathered in one pass over its history. */
export interface CollectedRun {
  readonly meta: HistoryMeta | undefined;
  readonly summary: HistorySummary;
  readonly records: readonly TransitionRecord<string>[];
  readonly rejected: readonly RejectedMove[];
  /** State names in table order (the run's own table when its file has one), then any others the run visited. */
  readonly order: readonly string[];
  readonly kinds: Readonly<Record<string, StateKind>>;
  /** Seqs of the moves that ended a visit to SendingToLLM / SendingToolResults that needed more than one attempt. */
  readonly retried: ReadonlySet<number>;
  /** Usage over time, cumulative; empty when no record carries usage (`RunFacts.usage`). */
  readonly usage: readonly UsagePoint[];
  /** The usage last recorded (`RunFacts.finalUsage`). */
  readonly finalUsage: RunUsage | null;
  /** How the run ended, in `RunReport.outcome` terms where it maps (`end_of_turn`, `error`, …), else `incomplete` / `empty` (`RunFacts.outcome`). */
  readonly outcome: string;
}

/**
 * Gathers a run's moves, rejected moves, usage and summary from its history items (entries
 * read from a file, or plain records). The summary is `summarizeHistory`'s, so the page's
 * failure panel says what `agent-sm inspect` says; outcome, usage and retries are `runFacts`'s,
 * so the page says what every other reader of the file says. Pure.
 */
export function collectRun(items: Iterable<HistoryItem>): CollectedRun {
  const summarizer = new HistorySummarizer({ lastMoves: 10 });
  const collector = new RunFactsCollector();
  const records: TransitionRecord<string>[] = [];
  const rejected: RejectedMove[] = [];
  let table: TransitionTable<string> | undefined;
  let meta: HistoryMeta | undefined;
  let index = 0;
  for (const item of items) {
    const name = `items[${index++}]`;
    summarizer.add(item, name);
    collector.add(item, name);
    if (!isHistoryEntry(item)) records.push(item);
    else if (item.kind === 'record') records.push(item.record);
    else if (item.kind === 'rejected') rejected.push(item.rejected);
    else if (item.kind === 'meta') ({ meta, table } = item);
  }
  const summary = summarizer.result();
  const base = table ?? (DEFAULT_TABLE as TransitionTable<string>);
  const order = tableStates(base);
  const known = new Set(order);
  const kinds: Record<string, StateKind> = {};
  const kindOf = (state: string): StateKind => {
    const flags = base.states[state];
    if (flags?.isError === true) return 'error';
    if (flags?.isTerminal === true) return 'end';
    return KINDS[state] ?? 'other';
  };
  for (const state of order) kinds[state] = kindOf(state);
  for (const r of records) {
    for (const state of [r.from, r.to]) {
      if (known.has(state)) continue;
      known.add(state);
      order.push(state);
      kinds[state] = kindOf(state);
    }
  }
  const facts = collector.result();
  return {
    meta,
    summary,
    records,
    rejected,
    order,
    kinds,
    retried: new Set(facts.retried),
    usage: facts.usage,
    finalUsage: facts.finalUsage,
    outcome: facts.outcome,
  };
}
