import type { RunStore } from './keeping/RunStore';
import type { BillingRule } from '../agent/money/providerBilling';
import type { Logger } from 'winston';
import type { Pricing } from '../agent/AgentLoop';
import type { AgentLogger } from '../agent/AgentLogger';
import type { AgentWithStateMachine, AgentWithStateMachineOptions } from '../agent/AgentWithStateMachine';
import type { BudgetLimits } from '../agent/BudgetLimits';
import type { ExternalBudget } from '../agent/money/ExternalBudget';
import type { OnUnknownCost } from '../agent/money/priceResponse';
import type { RetryOptions } from '../agent/retry/retryDelay';
import type { JsonlHistorySinkOptions } from '../history/JsonlHistorySinkOptions';
import type { Sleep } from '../internal/sleep';
import type { AgentSource } from './tasks/runTask';
import type { ResumeToolPolicy } from '../agent/journal/ResumeToolPolicy';
import type { BatchApprovalRequest } from './approvals/ParkedRuns';
import type { BatchProgress } from './BatchReport';
import type { BatchPause } from './raises/CapRaises';

import type { BatchTotal } from './BatchTotal';

export type { BatchTotal } from './BatchTotal';

/** One agent task of a batch: a single turn of `agent` on `input`. */
export interface BatchTask {
  /** Unique within the batch; names the run in the report and its history file. */
  id: string;
  /** The user message the run starts with. */
  input: string;
  /**
   * The agent loop, or a factory called when the run starts (so that 10,000 agents need not
   * exist at once). A factory may ignore its argument; one that takes a while (booting a
   * sandbox, cloning a repository) should stop when `signal` aborts. If the batch is aborted
   * while a factory is pending, the factory gets `cancelGraceMs` to settle, then is abandoned
   * and the run ends as `cancelled`.
   */
  agent: AgentSource;
}

/** Options of `runBatch(tasks, options)`: how to build each run's agent, concurrency, budgets, history files, abort. */
export interface BatchOptions {
  /** Runs in flight at once: a positive integer. Default 4. */
  concurrency?: number;
  /** Limits for each run on its own. */
  perRun?: BudgetLimits;
  /**
   * Limits for the whole batch, charged as usage happens. `maxWallMs` is the batch's elapsed time.
   * Total spend passes a limit by at most one LLM response per run in flight (see `runBatch`),
   * except `maxCostUsd`, strict unless `strict: false`, which it never passes: each call holds
   * its worst case in the shared pool before it starts.
   */
  total?: BatchTotal;
  /**
   * With `total.whenSpent: 'pause'`: called when the batch pauses at its cap (once per pause),
   * with the figures and `raise({ maxCostUsd })`, which may be called then or later. A throw
   * is logged; the batch stays paused. A paused batch waits for a raise or for `signal`.
   */
  onPause?: (pause: BatchPause) => void | Promise<void>;
  /** Retries of a failed LLM call, per run, as `AgentWithStateMachine` takes them. */
  retry?: RetryOptions;
  /** Write each run's full history, as it happens, to `<historyDir>/<task id made safe>.jsonl`. Created if missing. */
  historyDir?: string;
  /**
   * Keep each run's history in this store instead of files (`new PostgresStore(url)` from
   * `agent-state-machine/postgres`), as batch `batchId`: the same lines, the same durability
   * modes, each `reserve` line committed before its call (an agent's or a framework's). Not
   * with `historyDir`. The journal and ledger are on by default, as with `historyDir`.
   */
  store?: RunStore;
  /** The batch's id in `store` (default: its start time and a random suffix); its runs are found by it. */
  batchId?: string;
  /**
   * When each run's history file is forced to the disk, as `JsonlHistorySink` takes it:
   * `'turn'` (its default: once per run, as a run is one turn), `'move'`, or `'none'` (no
   * fsync: a crash of the process loses nothing, a power cut may lose the last seconds).
   */
  historyDurability?: JsonlHistorySinkOptions['durability'];
  /**
   * Group commit for each run's history file, as `JsonlHistorySink` takes it (`true` or
   * `{ maxLines, maxDelayMs }`): a run's lines are written together when its turn ends (one
   * write per run instead of one per move). Default off. A killed process loses the lines of
   * the runs in progress (at most `maxLines` each); finished runs are whole.
   */
  historyGroupCommit?: JsonlHistorySinkOptions['groupCommit'];
  /**
   * Write over the runs already in `historyDir`: each file this batch would write is set aside
   * as `<file>.overwritten`, with the attempts a resume kept beside it (`.interrupted`), so a
   * resume of this batch never serves or counts them. Default false: a batch whose directory
   * already holds a file it would write fails before any run starts, naming the clashes, so
   * a second batch cannot silently replace the first one's histories.
   */
  overwriteHistory?: boolean;
  /**
   * Finish an interrupted run of this batch in `historyDir` (the same tasks, in the same order,
   * as its `batch.json`): runs that ended are not run again and their report rows come from
   * their files; runs never started start. A run cut off mid-turn whose file has a journal
   * (on by default with `historyDir`) continues: its journaled LLM responses are handed to its loop's
   * `acceptRecorded` (an AI SDK run's model) with no request, its recorded tool calls follow
   * `resumeTools`, then it goes live. A run without a journal, or whose loop cannot take them
   * (no `acceptRecorded`; an Agents SDK or LangGraph run), starts again from the beginning. Either way its old file is kept beside as `<file>.interrupted`, the new
   * file holds the whole run, and what it spent before counts in its usage (and `perRun`). The
   * shared budget starts from the spend in the files, so a cap holds across both processes.
   * With `store`, the same for batch `batchId` in the store: its manifest is the store's, and a
   * cut-off run's attempt is set aside there (kept, readable) instead of renamed. Default false.
   */
  resume?: boolean;
  /**
   * With `resume`: read past the damaged lines of its run files (a hole of NUL bytes a power
   * cut leaves, a glued line) as `loadHistory`'s `salvage` does, instead of refusing the batch.
   * What they held is lost: a run ended before keeps its row from what is left; a cut-off run
   * continues from the journal lines left, or restarts. The logger names each file salvaged
   * and its skipped lines, and so does the run's `salvaged`. Default false.
   */
  salvage?: boolean;
  /**
   * With `resume`: which tool calls of a cut-off run are run again (tools that only read) and
   * which are answered from its journal (the default, for all). `{ default?, rerun?, serve? }`
   * with tool names, or a function of the call returning `'serve'` or `'rerun'`. A call cut
   * off while it ran is run again only under `'rerun'`; otherwise it is answered as interrupted.
   * Refused without `resume` (a batch that does not resume serves no recorded call).
   */
  resumeTools?: ResumeToolPolicy;
  /** Aborting cancels the runs in flight and skips the rest; the report still comes back. */
  signal?: AbortSignal;
  /** Called after each run starts or ends and when runs are skipped. A throw is logged, never propagated. */
  onProgress?: (progress: BatchProgress) => void;
  /**
   * Draw a progress line on standard error, redrawn in place as runs start and end: runs ended
   * of all, failed, in flight, spend against `total.maxCostUsd`, time left. Only when standard
   * error is a terminal; on a pipe or a file nothing is written. Default false.
   */
  progress?: boolean;
  /** Any logger with error, warn, info and debug methods (winston, pino, console), or `false` for none. Default: the library's shared stderr logger. */
  logger?: AgentLogger | Logger | false;
  /** Computes a response's cost from its tokens when it reports none, as `AgentWithStateMachine` takes it. */
  pricing?: Pricing;
  /** What a run does when a cost cap is set and a response's cost is unknown. Default `'error'`. */
  onUnknownCost?: OnUnknownCost;
  /** Which failed requests are not billed, as `AgentWithStateMachine` takes it: rows in place of the provider rows of the same status. */
  billing?: readonly BillingRule[];
  /** Tool calls of one response run at once, per run. Default 1. */
  toolConcurrency?: number;
  /**
   * Each run's table, approval policy and compaction, as `AgentWithStateMachineOptions` has
   * them. A run waiting for approval is parked: it lets go of its slot, `onApproval` gets its
   * calls, and once all are answered it takes the next free slot (before new tasks) and goes on.
   * A framework task takes `approve` too: its integration puts it on the tools it wraps (a
   * call it names that the framework runs unasked ends the run in Error). A parked run ends on
   * its own after `approvalTimeoutMs` (a framework task's too, parked by its framework's own
   * approval, with no `approve` needed); with no timeout the batch waits
   * for the answers, or for `signal`, which ends parked runs as `cancelled`.
   */
  table?: AgentWithStateMachineOptions['table'];
  approve?: AgentWithStateMachineOptions['approve'];
  approvalTimeoutMs?: number;
  /**
   * Called when a run parks for approval, with its calls and `approve(callId, { input? })` /
   * `deny(callId, reason?)`, which may be called at once or any time later. A throw is logged;
   * the run stays parked. Answers given straight to the run's agent (through `onRun`) make
   * it go on at once, outside the concurrency count.
   */
  onApproval?: (request: BatchApprovalRequest) => void | Promise<void>;
  compact?: boolean;
  /**
   * Journal every LLM attempt and tool call in each run's history file, as
   * `AgentWithStateMachine` takes it (`true` or `{ redact }`). Needs `historyDir`. On by
   * default with `historyDir` (`false` turns it off): a batch killed with no option given then
   * resumes its cut-off runs from their journal, paying for no call that was answered.
   */
  journal?: AgentWithStateMachineOptions['journal'];
  /**
   * The money ledger in each run's history file without the journal's content, as
   * `AgentWithStateMachine` takes it: a `reserve` line fsync'ed before each LLM attempt. Needs
   * `historyDir`. On by default with `historyDir` (`false` turns it off; it is on whenever the journal is).
   */
  ledger?: boolean;
  /** The reservation a ledger line states when a call's worst case is unknown, as `AgentWithStateMachine` takes it. */
  ledgerDefaultMaxCostUsd?: number;
  /** The fewest output tokens a strict cap lowers a request to, as `AgentWithStateMachine` takes it. Default 256. */
  minOutputTokens?: number;
  /** Budgets kept outside this process (shared by workers on several machines), consulted by every run. */
  externalBudgets?: readonly ExternalBudget[];
  /** After an abort, how long a run's running operation may take to stop before it is abandoned. Default 2,000 ms, as on the adapter. */
  cancelGraceMs?: number;
  /** Epoch milliseconds, for durations, history times and the batch's `maxWallMs`. Default `Date.now`. */
  clock?: () => number;
  /** How runs wait (retry backoff, cancel grace). Tests pass one that does not really wait. */
  sleep?: Sleep;
  /** Source of retry jitter, [0, 1). Default Math.random. */
  random?: () => number;
  /**
   * Called with each run's adapter before its turn starts, to instrument it (tracing, metrics,
   * listeners); may return a function called when the run has ended. A throw ends that run as `error`.
   * Not called for framework tasks (`{ id, drive(mirror) }`): they have a mirror, not an adapter.
   */
  onRun?: (run: { id: string; index: number; agent: AgentWithStateMachine }) => (() => void) | void;
}
