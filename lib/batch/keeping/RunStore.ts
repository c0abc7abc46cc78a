import type { JsonlHistorySinkOptions } from '../../history/JsonlHistorySinkOptions';
import type { HistorySink } from '../../machine/HistorySink';
import type { TransitionTable } from '../../machine/TransitionTable';
import type { BatchManifest } from './batchManifest';
import type { FolderAnswer } from './approvalAnswers';
import type { CapPause } from './capPause';
import type { RaiseRequest } from './raiseRequests';

/** A person's answer to a call a run of a batch waits on, as a store keeps it: the run, the call, how, when, by whom. */
export type ApprovalAnswer = FolderAnswer;

/** An answer a store keeps, and whether the batch took it. */
export type KeptAnswer = ApprovalAnswer & { taken: boolean };

/**
 * Where a batch keeps its runs' records instead of files (`runBatch({ store })`): a database
 * that many workers write and any machine reads. A run's lines are kept as a history file's
 * lines (the same JSON), so every reader takes them. `PostgresStore`
 * (`agent-state-machine/postgres`) is one.
 */
export interface RunStore {
  /** The store in messages: where it is, without a password (`postgres://host:port/db`). */
  readonly name: string;
  /** Creates what the store needs (tables), when missing. Idempotent. */
  migrate(): Promise<void>;
  /**
   * Opens batch `batchId` for writing: takes its lock (one writer of a batch at a time, freed
   * when its process dies), refuses runs it already holds unless `overwrite`, and records the
   * manifest before any run starts.
   */
  openBatch(options: StoreBatchOptions): Promise<StoreBatch>;
  /** The lines of a run, each ending in a newline, as a stream a history reader takes (`input`). */
  readRun(batchId: string, runId: string): AsyncIterable<Uint8Array>;
  /**
   * Batch `batchId` as readers take it (`agent-sm report --store URL <batchId>`): its manifest,
   * whether a writer holds it, and each run it keeps with the attempts a resume set aside.
   * Undefined when the store holds no such batch.
   */
  readBatch(batchId: string): Promise<StoredBatch | undefined>;
  /** One row a run, newest first, as `agent-sm runs` lists them. */
  listRuns(query?: StoredRunQuery): Promise<StoredRun[]>;
  /**
   * Keeps a person's answer to a call a run of batch `batchId` waits on (`agent-sm approve
   * --store`), for the batch to take once: resolves undefined once kept, or, keeping nothing,
   * with the answer the call has already (waiting, or taken for the same wait: the same
   * `waitingSince`). Optional, with `readAnswers` and `markAnswerTaken`: a store without them
   * takes answers in the batch's own process only (`onApproval`).
   */
  keepAnswer?(batchId: string, answer: ApprovalAnswer): Promise<KeptAnswer | undefined>;
  /** Every answer kept for batch `batchId`, waiting and taken, in run then call order. */
  readAnswers?(batchId: string): Promise<KeptAnswer[]>;
  /** Marks an answer taken by the batch (its run took it): it is never taken again. */
  markAnswerTaken?(batchId: string, answer: ApprovalAnswer): Promise<void>;
  /**
   * Keeps a request to raise the paused cap of batch `batchId` (`agent-sm raise --store`,
   * `requestRaise`), after those kept before, for the batch to take (and a resume to start
   * from). Optional, with `readRaises`, `keepPause` and `readPause`: a store without them takes
   * raises in the batch's own process only (`onPause`). A batch opened anew (not resumed, not
   * joined) sets aside the raises and the pause of the batch of that id before it.
   */
  keepRaise?(batchId: string, request: RaiseRequest): Promise<void>;
  /** The raise requests of batch `batchId`, in the order kept. */
  readRaises?(batchId: string): Promise<RaiseRequest[]>;
  /** Notes that batch `batchId` is paused at its cap (`pause`), or no longer (undefined): its readers in other processes show it. */
  keepPause?(batchId: string, pause: CapPause | undefined): Promise<void>;
  /** The pause last noted for batch `batchId`. */
  readPause?(batchId: string): Promise<CapPause | undefined>;
  /** Ends the store's connections. */
  close(): Promise<void>;
}

/** What `RunStore.openBatch` takes. */
export interface StoreBatchOptions {
  batchId: string;
  /** Who writes the batch, named in the error another writer gets. */
  owner: string;
  /** Set aside the runs of the same ids already there (they stay readable), instead of refusing them. */
  overwrite: boolean;
  /**
   * Continue the batch the store holds under `batchId` (`runBatch({ resume: true })`): its runs
   * are not refused and its manifest is kept (`StoreBatch.earlier`), not replaced by `manifest`.
   */
  resume?: boolean;
  manifest: Omit<BatchManifest, 'type' | 'version'>;
  /**
   * Writers that give the same `owner` write the batch together, each in its own process (a
   * distributed batch's producer and workers): the first records `manifest`, the others join
   * and find it in `earlier`, and no run is refused on opening (each writer sets aside the
   * attempt it continues). A writer of another owner, or one not `shared`, is refused while
   * any of them holds the batch; a batch another owner started is refused them.
   */
  shared?: boolean;
}

/** A batch open for writing in a store. */
export interface StoreBatch {
  readonly batchId: string;
  /** Opened with `resume` or `shared`: the manifest the batch was started with; undefined when the store had no such batch. */
  readonly earlier: BatchManifest | undefined;
  /**
   * The attempts of run `runId` kept in the batch, the newest first: the run as it stands, then
   * those a resume set aside (not those set aside by `overwrite`, which were another batch's).
   * Each names the run in messages and reads its lines (`input`). Empty for a run never opened.
   */
  attempts(runId: string): Promise<Array<{ name: string; input: AsyncIterable<Uint8Array> }>>;
  /**
   * Sets run `runId`'s attempt aside, kept and readable, so that a resume opens a new one
   * (a folder renames the file to `<file>.interrupted`).
   */
  setAside(runId: string): Promise<void>;
  /**
   * Opens run `runId` of the batch and commits its meta line (the table given, the machine's).
   * Rejects when the store cannot be reached, naming where and how long it waited.
   */
  openRun(runId: string, options: JsonlHistorySinkOptions, table: TransitionTable<string>): Promise<RunSink>;
  /** Frees the batch's lock. */
  close(): Promise<void>;
}

/** A run's sink in a store, or a file's: it says where the run is kept and is closed when the run ends. */
export interface RunSink extends HistorySink<string> {
  /** The history file, or the run as the store names it. */
  readonly path: string;
  close(): void | Promise<void>;
}

/** A batch as `RunStore.readBatch` reads it. */
export interface StoredBatch {
  /** The manifest the batch was started with. */
  readonly manifest: BatchManifest;
  /** A writer holds the batch: it is running. */
  readonly running: boolean;
  /** Its runs, the oldest first: each as it stands, and the attempts a resume set aside, the oldest first. */
  readonly runs: ReadonlyArray<{
    readonly runId: string;
    readonly run: StoredLines;
    readonly setAside: readonly StoredLines[];
  }>;
}

/** Lines a store keeps: what names them in messages, and a reader of them (`input`), read anew each call. */
export interface StoredLines {
  readonly name: string;
  /**
   * The lines after the first `afterLine` (default 0: all), each ending in a newline, as they
   * are now: a watcher polls for what is new by the count of lines it has read (a run's lines
   * are committed in order, so those there are always its first ones).
   */
  read(afterLine?: number): AsyncIterable<Uint8Array>;
}

/** Which runs `RunStore.listRuns` lists; every field narrows. */
export interface StoredRunQuery {
  batchId?: string;
  /** The run's outcome as `RunFacts` says it (`end_of_turn`, `error`, …), or `incomplete` for a run that never ended; a list selects any of them. */
  outcome?: string | readonly string[];
  /** Only runs that ended in an error state (by the `isError` flags of the run's table): those with a `reason`. */
  failed?: boolean;
  /** Runs started at or after this time, epoch milliseconds. */
  since?: number;
  /** At most this many rows (default 1000). */
  limit?: number;
}

/**
 * One run, as a store keeps its facts for questions across runs. A run resumed after a crash
 * counts its money, and its reasons, over every attempt, as a batch's readers do.
 */
export interface StoredRun {
  batchId: string;
  runId: string;
  /** When the run started, epoch milliseconds. */
  startedAt: number;
  /** Its outcome (`RunFacts.outcome`), or `incomplete` while it runs or after its process died. */
  outcome: string;
  /** Why it failed, when it did. */
  reason: string | undefined;
  /** What it spent, by the ledger's rule: billed plus uncertain (what caps count); 0 until it ends. */
  costUsd: number;
  /** Of `costUsd`, USD charged at a hold's worst case: the request may have been billed, no usage came back; 0 until it ends. */
  uncertainUsd: number;
  /** USD held and let go: provably not billed, in no cap; 0 until it ends. */
  releasedUsd: number;
  /** Why money is uncertain, most calls first: each reason and how many calls it covers. */
  uncertain: Array<{ why: string; calls: number }>;
  /** LLM calls of unknown cost (no price, no hold): in none of the dollars, never taken for $0; 0 until it ends. */
  unpricedCalls: number;
  /** Why their cost is unknown, most calls first. */
  unpriced: Array<{ why: string; calls: number }>;
  /** Its LLM calls; 0 until it ends. */
  calls: number;
  /** From its start to its last move, milliseconds; 0 until it ends. */
  durationMs: number;
}
