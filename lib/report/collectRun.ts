import { isHistoryEntry, type HistoryItem, type HistoryMeta, type RejectedMove } from '../history/HistoryEntry';
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

/** Cumulative usage of a run at one moment, as far as its records tell. */
export interface UsagePoint {
  readonly at: number;
  readonly costUsd: number;
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly cachedInputTokens: number;
  readonly llmCalls: number;
  readonly toolCalls: number;
}

/** What a report needs of one run, gathered in one pass over its history. */
export interface RunFacts {
  readonly meta: HistoryMeta | undefined;
  readonly summary: HistorySummary;
  readonly records: readonly TransitionRecord<string>[];
  readonly rejected: readonly RejectedMove[];
  /** State names in table order (the run's own table when its file has one), then any others the run visited. */
  readonly order: readonly string[];
  readonly kinds: Readonly<Record<string, StateKind>>;
  /** Seqs of the moves that ended a visit to SendingToLLM / SendingToolResults that needed more than one attempt. */
  readonly retried: ReadonlySet<number>;
  /** Usage over time, cumulative; empty when no record carries usage. */
  readonly usage: readonly UsagePoint[];
  /** How the run ended, in `RunReport.outcome` terms where it maps (`end_of_turn`, `error`, …), else `incomplete` / `empty`. */
  readonly outcome: string;
}

/**
 * Gathers a run's moves, rejected moves, usage and summary from its history items (entries
 * read from a file, or plain records). The summary is `summarizeHistory`'s, so the page's
 * failure panel says what `agent-sm inspect` says. Pure.
 */
export function collectRun(items: Iterable<HistoryItem>): RunFacts {
  const summarizer = new HistorySummarizer({ lastMoves: 10 });
  const records: TransitionRecord<string>[] = [];
  const rejected: RejectedMove[] = [];
  let table: TransitionTable<string> | undefined;
  let meta: HistoryMeta | undefined;
  let index = 0;
  for (const item of items) {
    summarizer.add(item, `items[${index++}]`);
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
  return { meta, summary, records, rejected, order, kinds, retried: retriedMoves(records), usage: usageOverTime(records), outcome: outcomeOf(summary) };
}

/** The outcome a batch report would give the run, read from its history alone. */
function outcomeOf(summary: HistorySummary): string {
  if (summary.status === 'empty' || summary.status === 'incomplete') return summary.status;
  const last = summary.turns.list.at(-1);
  const state = summary.status === 'failed' ? summary.failure?.state : last?.outcome;
  // A turn that starts on a spent budget (or is cancelled before it starts) moves to Error; its data says which.
  const said = dataField(summary.failure?.data, 'outcome');
  if (state === 'Error' && (said === 'budget_exceeded' || said === 'cancelled')) return said;
  switch (state) {
    case 'EndOfTurn':
      return 'end_of_turn';
    case 'Error':
      return 'error';
    case 'Cancelled':
      return 'cancelled';
    case 'BudgetExceeded':
      return 'budget_exceeded';
    default:
      return state ?? summary.status;
  }
}

/**
 * A move out of a sending state whose data reports more than one attempt (the adapter's
 * `attempts`) or earlier failures: the LLM call was retried.
 */
function retriedMoves(records: readonly TransitionRecord<string>[]): Set<number> {
  const seqs = new Set<number>();
  for (const r of records) {
    const attempts = dataField(r.data, 'attempts');
    const failures = dataField(r.data, 'failures');
    if ((typeof attempts === 'number' && attempts > 1) || (Array.isArray(failures) && failures.length > 0)) seqs.add(r.seq);
  }
  return seqs;
}

/**
 * Usage read from records' `data.usage`, whatever else the data holds. The adapter writes its
 * running totals there (they carry `llmCalls`); a `usage` without `llmCalls` is taken as one
 * response's usage and added up. Fields that are not finite numbers count as absent.
 */
function usageOverTime(records: readonly TransitionRecord<string>[]): UsagePoint[] {
  const points: UsagePoint[] = [];
  let sum = { costUsd: 0, inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, llmCalls: 0, toolCalls: 0 };
  for (const r of records) {
    const usage = dataField(r.data, 'usage');
    if (typeof usage !== 'object' || usage === null || Array.isArray(usage)) continue;
    const u = usage as Record<string, unknown>;
    const n = (key: string): number | undefined => (typeof u[key] === 'number' && Number.isFinite(u[key]) ? (u[key] as number) : undefined);
    if (n('costUsd') === undefined && n('inputTokens') === undefined && n('outputTokens') === undefined) continue;
    if (n('llmCalls') !== undefined) {
      sum = { costUsd: n('costUsd') ?? sum.costUsd, inputTokens: n('inputTokens') ?? sum.inputTokens, outputTokens: n('outputTokens') ?? sum.outputTokens, cachedInputTokens: n('cachedInputTokens') ?? sum.cachedInputTokens, llmCalls: n('llmCalls')!, toolCalls: n('toolCalls') ?? sum.toolCalls };
    } else {
      sum = { ...sum, costUsd: sum.costUsd + (n('costUsd') ?? 0), inputTokens: sum.inputTokens + (n('inputTokens') ?? 0), outputTokens: sum.outputTokens + (n('outputTokens') ?? 0), cachedInputTokens: sum.cachedInputTokens + (n('cachedInputTokens') ?? 0), llmCalls: sum.llmCalls + 1 };
    }
    const prev = points.at(-1);
    if (prev !== undefined && prev.costUsd === sum.costUsd && prev.inputTokens === sum.inputTokens && prev.outputTokens === sum.outputTokens && prev.llmCalls === sum.llmCalls) continue;
    points.push({ at: r.at, ...sum });
  }
  return points;
}

/** `data[key]` when data is a plain object, else undefined. */
export function dataField(data: unknown, key: string): unknown {
  return typeof data === 'object' && data !== null && !Array.isArray(data) ? (data as Record<string, unknown>)[key] : undefined;
}
