import type {
  AgentLoop,
  ApprovalPolicy,
  JournalOptions,
  Pricing,
  ResumeToolPolicy,
  StepMirror,
} from 'agent-state-machine';
import type { RunStore } from 'agent-state-machine/batch';
import type { RedisConnection } from './connection';
import type { DistributedTask } from './DistributedTask';

/** Options of `startBatchWorker(options)`. */
export interface BatchWorkerOptions {
  /** Redis: a URL, ioredis options or an ioredis client (duplicated, never closed). */
  connection: RedisConnection;
  /** The queue batches are submitted to (`submitBatch({ name })`). */
  name: string;
  /** BullMQ's key prefix. Default `bull`. */
  prefix?: string;
  /**
   * Builds the agent loop for a task, from its data. Called when the run starts; one that
   * takes a while (booting a sandbox) should stop when `signal` aborts.
   */
  agent?: (task: DistributedTask, ctx: { signal: AbortSignal; batchId: string }) => AgentLoop | Promise<AgentLoop>;
  /**
   * Instead of `agent`: runs a task whose loop a framework owns (an AI SDK `generateText` or
   * `ToolLoopAgent`, …), given the `StepMirror` that records it and checks it against the
   * batch's budgets in Redis: put the mirror on the framework (`mirrorAISDK({ mirror, model,
   * tools })`) and run it. Give `agent` or `drive`, not both.
   */
  drive?: (task: DistributedTask, mirror: StepMirror, ctx: { signal: AbortSignal; batchId: string }) => unknown;
  /**
   * Which tool calls wait for a person before they run, as `AgentWithStateMachine` takes it
   * (tool names mapped to `true`, or a function of the call). A run whose LLM asks for one parks:
   * its request goes to Redis, and the run lets go of its slot and its job (its job waits in
   * BullMQ's delayed list on a lease this worker renews) until every call is answered — by the
   * producer's `onApproval`, or an `attachBatch({ onApproval })` in any process. It then takes
   * the next free slot before any new run, and goes on with the answers: approved calls run
   * (with the input given, if any), denied ones do not, and the LLM is told so. Beside `drive`
   * the integration puts the policy on the framework's tools; they and the framework's own
   * approvals (AI SDK or Agents SDK `needsApproval`, LangGraph `interrupt()`) park the run in
   * the same way, answered through the same records.
   */
  approve?: ApprovalPolicy;
  /**
   * With `approve`, or beside `drive` (its framework's own approvals): a parked run left
   * unanswered this long ends on its own, `cancelled` in ApprovalTimedOut, its calls not run —
   * as in `runBatch`. Counted on this worker from the moment the run parks. Default: no limit (the run waits for its answers, or the batch's abort).
   */
  approvalTimeoutMs?: number;
  /** Runs at once in this worker. Default 4. */
  concurrency?: number;
  /** Each run's JSON Lines history goes to `<historyDir>/<batch id>/<index>-<task id made safe>.jsonl`. */
  historyDir?: string;
  /**
   * Instead of `historyDir`: each run's records go to this store (`new PostgresStore(url)`),
   * under the batch id and the task id, shared with the batch's other workers and its
   * producer. A run whose worker was lost and that is run again (`retryLostRuns`) continues
   * from its journal there: recorded calls are served, not sent again, and what it spent counts.
   * The worker does not close the store.
   */
  store?: RunStore;
  /**
   * A run taken over from a lost worker that continues from its journal (`store` and `journal`):
   * which of the cut-off attempt's tool calls are run again (tools that only read) and which are
   * answered from the journal (the default, for all), as `runBatch` takes it. A function runs
   * here, so it is this worker's: give every worker of a batch the same policy.
   */
  resumeTools?: ResumeToolPolicy;
  /** Journal every LLM attempt and tool call in each run's records (`true` or `{ redact }`), as `AgentWithStateMachine` takes it. Needs `historyDir` or `store`. */
  journal?: boolean | JournalOptions;
  /** Names this worker in reports. Default `<host>:<pid>:<random>`. */
  workerId?: string;
  /** Prices responses that report no cost, when the batch brought no price table. */
  pricing?: Pricing;
  /**
   * How long a run's job lock lasts without renewal (renewed every half of it). A worker
   * silent this long — killed, frozen, cut off — loses its runs. Default 30,000 ms.
   */
  lockDurationMs?: number;
  /** How often this worker looks for runs whose worker was lost. Default 30,000 ms. */
  stalledIntervalMs?: number;
  /** Where the worker says what went wrong outside a run (Redis errors). Default `console.error`; `false` for none. */
  onError?: ((error: Error) => void) | false;
  /**
   * How long each Redis operation of a run (its start, each budget check, its report) waits
   * for an unreachable Redis before it fails: the call is then not made, and the run ends as an
   * error naming the address and the wait. Default 10,000 ms.
   */
  redisTimeoutMs?: number;
  /**
   * How long `close()` lets runs in flight end on their own; then they are cancelled (each
   * given a second), and the worker disconnects. `close()` settles within this plus 4 s, Redis
   * or not. A job not begun (taken as it closed, or waiting for a slot) goes back to the queue.
   * Default 30,000 ms.
   */
  closeTimeoutMs?: number;
}

/** A running worker. */
export interface BatchWorkerHandle {
  /** How the worker is named in reports. */
  readonly id: string;
  /** Runs in flight now. */
  readonly running: number;
  /**
   * Resolves once Redis answers; rejects with a RedisUnreachableError (address, wait) when it
   * does not within `redisTimeoutMs`. The worker keeps trying to connect either way.
   */
  readonly ready: Promise<void>;
  /**
   * Stops taking runs (a job it took as it closed goes back to the queue, for another worker),
   * lets the runs in flight end (they are reported), and disconnects.
   */
  close(): Promise<void>;
}
