// Every option of the library's entry points, declared once: which entry points take it, its
// default where it has one (every entry point that takes it reads that one value), and why each
// that does not take it refuses it (an option refused is named with its reason; one
// neither taken nor refused is an unknown option, answered with the nearest name). The key
// lists each entry point checks (`assertKnownOptions`, checked there against its options type)
// and the refusal maps are read from here, and test/options/everyPath.test.ts is generated
// from it: each option given to each entry point that does not take it must be refused by name.

/**
 * The entry points that take options. A framework task's adapter options are refused as the
 * mirror's are. `raise`, `approvals` and `answer` are the distributed batch's small helpers:
 * `raiseBatch()`, `readBatchApprovals()` and `answerBatchApproval()`.
 */
export type OptionEntry =
  'adapter' | 'runTurn' | 'mirror' | 'batch' | 'worker' | 'submit' | 'attach' | 'raise' | 'approvals' | 'answer';

/** One option: the entry points that take it, its default when it is left out, and the reason of each that refuses it by name. */
interface Declared {
  readonly on: readonly OptionEntry[];
  readonly refused?: Readonly<Partial<Record<OptionEntry, string>>>;
  readonly default?: number | string | boolean;
}

/** How long a Redis operation waits for an unreachable Redis: the worker's `redisTimeoutMs`, the producer's `timeoutMs`. */
const REDIS_TIMEOUT_MS = 10_000;

const NO_TABLE = 'the worker runs the default table';
const NO_COMPACT = 'the worker does not compact runs yet';
const PER_WORKER = 'each worker writes its own runs, so give it to startBatchWorker()';
const PRODUCER_LIMITS = "the batch's limits are the producer's: give them to submitBatch()";

/** The mirror's refusals serve a framework task of `runBatch` too: its framework's loop runs the calls. */
const OPTIONS = {
  // The run's record and its clock.
  maxHistorySize: { on: ['adapter', 'mirror'] },
  clock: { on: ['adapter', 'mirror', 'batch'] },
  sink: { on: ['adapter', 'mirror'] },
  logger: { on: ['adapter', 'mirror', 'batch'] },
  signal: { on: ['runTurn', 'mirror', 'batch', 'submit', 'attach'] },
  // The loop's moves.
  table: {
    on: ['adapter', 'batch'],
    refused: {
      mirror:
        'a framework run moves through the default table (its loop has no compaction or approval hook the mirror could drive)',
      worker: NO_TABLE,
      submit: NO_TABLE,
    },
  },
  compact: {
    on: ['adapter', 'batch'],
    refused: {
      mirror: "the framework owns the conversation, so the mirror cannot compact it; use the framework's own trimming",
      worker: NO_COMPACT,
      submit: NO_COMPACT,
    },
    default: false,
  },
  retry: {
    on: ['adapter', 'batch', 'submit'],
    refused: {
      mirror:
        "the framework retries its own model calls; set them there (AI SDK `maxRetries`, the client's `maxRetries`)",
      worker: "retries are the producer's setting: give them to submitBatch()",
    },
  },
  toolConcurrency: {
    on: ['adapter', 'batch'],
    refused: { mirror: 'the framework runs the tool calls of a response itself, as many at once as it chooses' },
    default: 1,
  },
  cancelGraceMs: {
    on: ['adapter', 'batch', 'submit'],
    refused: { mirror: "the framework's own loop decides when a cancelled call stops" },
    default: 2000,
  },
  sleep: { on: ['adapter', 'batch'], refused: { mirror: 'the framework waits between its own retries' } },
  random: { on: ['adapter', 'batch'], refused: { mirror: 'the framework jitters its own retries' } },
  stall: { on: ['adapter', 'mirror'] },
  // Approvals.
  approve: { on: ['adapter', 'mirror', 'batch', 'worker', 'submit'] },
  approvalTimeoutMs: { on: ['adapter', 'mirror', 'batch', 'worker', 'submit'] },
  approvals: { on: ['mirror'] },
  onApproval: {
    on: ['batch', 'submit', 'attach'],
    refused: { worker: 'the answers come from whoever follows the batch: give it to submitBatch() or attachBatch()' },
  },
  honours: { on: ['mirror'] },
  singleRun: { on: ['mirror'] },
  // Money.
  budget: { on: ['adapter', 'runTurn', 'mirror'] },
  sharedBudgets: { on: ['adapter', 'mirror'] },
  externalBudgets: { on: ['adapter', 'mirror', 'batch'] },
  perRun: { on: ['batch', 'submit'], refused: { worker: PRODUCER_LIMITS } },
  total: { on: ['batch', 'submit'], refused: { worker: PRODUCER_LIMITS } },
  onPause: { on: ['batch', 'submit'] },
  pricing: { on: ['adapter', 'mirror', 'batch', 'worker', 'submit'] },
  onUnknownCost: { on: ['adapter', 'mirror', 'batch'], default: 'error' },
  billing: { on: ['adapter', 'mirror', 'batch'] },
  minOutputTokens: {
    on: ['adapter', 'batch'],
    refused: {
      mirror: "a strict cap cannot lower a framework's request: its maxOutputTokens is the framework's setting",
    },
    default: 256,
  },
  ledger: { on: ['adapter', 'mirror', 'batch'] },
  ledgerDefaultMaxCostUsd: { on: ['adapter', 'mirror', 'batch'] },
  // The journal and resume.
  journal: { on: ['adapter', 'mirror', 'batch', 'worker'], refused: { submit: PER_WORKER } },
  resumeFrom: { on: ['adapter', 'mirror'] },
  resumeTools: {
    on: ['adapter', 'mirror', 'batch', 'worker'],
    refused: {
      submit:
        'the runs a worker takes over are continued by that worker: give the policy to startBatchWorker() (the same to each worker)',
    },
  },
  earlierSpend: { on: ['mirror'] },
  resume: {
    on: ['batch'],
    refused: {
      submit:
        'a distributed batch goes on by being attached (attachBatch({ batchId })) or submitted again with its batchId',
    },
    default: false,
  },
  salvage: { on: ['batch'], default: false },
  // Where a batch keeps its runs.
  historyDir: { on: ['batch', 'worker'], refused: { submit: PER_WORKER } },
  store: { on: ['batch', 'worker', 'submit'] },
  batchId: { on: ['batch', 'submit', 'attach', 'raise', 'approvals', 'answer'] },
  historyDurability: { on: ['batch'] },
  historyGroupCommit: { on: ['batch'] },
  overwriteHistory: { on: ['batch'], default: false },
  // A batch's runs and how it is followed.
  concurrency: {
    on: ['batch', 'worker'],
    refused: { submit: 'each worker has its own concurrency: give it to startBatchWorker()' },
    default: 4,
  },
  onRun: { on: ['batch'] },
  onProgress: { on: ['batch', 'submit', 'attach'] },
  progress: {
    on: ['batch'],
    refused: {
      submit: 'the producer draws no progress line: follow the batch with `onProgress` (its figures are the same)',
    },
    default: false,
  },
  // The distributed batch.
  connection: { on: ['worker', 'submit', 'attach', 'raise', 'approvals', 'answer'] },
  name: { on: ['worker', 'submit', 'attach', 'raise', 'approvals', 'answer'] },
  prefix: { on: ['worker', 'submit', 'attach', 'raise', 'approvals', 'answer'] },
  agent: { on: ['worker'] },
  // Instead of `agent`: a framework's loop, given each task and its mirror.
  drive: { on: ['worker'] },
  // The run an answer is for, by its task id. A worker took its framework's loop as `run` before `drive`.
  run: {
    on: ['answer'],
    refused: { worker: "`run` is now `drive` (a framework's loop, given each task and its mirror)" },
  },
  workerId: { on: ['worker'] },
  lockDurationMs: { on: ['worker'], default: 30_000 },
  stalledIntervalMs: { on: ['worker'], default: 30_000 },
  onError: { on: ['worker'] },
  redisTimeoutMs: { on: ['worker'], default: REDIS_TIMEOUT_MS },
  closeTimeoutMs: { on: ['worker'], default: 30_000 },
  retryLostRuns: { on: ['submit'], default: 0 },
  pollMs: { on: ['submit', 'attach'], default: 100 },
  keepKeys: { on: ['submit'], default: false },
  timeoutMs: { on: ['submit', 'attach', 'raise', 'approvals', 'answer'], default: REDIS_TIMEOUT_MS },
  expireAfterMs: { on: ['submit', 'attach'], default: 86_400_000 },
  reportFile: { on: ['submit', 'attach'] },
  // The distributed batch's small helpers.
  maxCostUsd: { on: ['raise'] },
  callId: { on: ['answer'] },
  approved: { on: ['answer'] },
  reason: { on: ['answer'] },
  by: { on: ['answer'] },
} as const satisfies Record<string, Declared>;

type Options = typeof OPTIONS;

/** The names entry point `E` takes, each `true`: the list `assertKnownOptions` checks against its type. */
export type KeysOn<E extends OptionEntry> = {
  readonly [K in keyof Options as E extends Options[K]['on'][number] ? K : never]: true;
};

/** The declared defaults, each widened to its type (`cancelGraceMs: number`, `onUnknownCost: 'error'`…). */
export type OptionDefaults = {
  readonly [K in keyof Options as Options[K] extends { default: unknown } ? K : never]: Options[K] extends {
    default: infer D;
  }
    ? D extends number
      ? number
      : D extends boolean
        ? boolean
        : D
    : never;
};

/** Every option's default, by name: what each entry point that takes the option uses when it is left out. */
export const OPTION_DEFAULTS: OptionDefaults = Object.freeze(
  Object.fromEntries(
    (Object.entries(OPTIONS) as Array<[string, Declared]>).flatMap(([key, declared]) =>
      declared.default === undefined ? [] : [[key, declared.default]],
    ),
  ),
) as OptionDefaults;

/** The names entry point `entry` takes, in the order declared. */
export function keysOn<E extends OptionEntry>(entry: E): KeysOn<E> {
  const out: Record<string, true> = {};
  for (const [key, declared] of Object.entries(OPTIONS) as Array<[string, Declared]>)
    if (declared.on.includes(entry)) out[key] = true;
  return Object.freeze(out) as KeysOn<E>;
}

/** The options entry point `entry` refuses by name, each with why and where it goes instead. */
export function refusedOn(entry: OptionEntry): Readonly<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const [key, declared] of Object.entries(OPTIONS) as Array<[string, Declared]>) {
    const why = declared.refused?.[entry];
    if (why !== undefined) out[key] = why;
  }
  return Object.freeze(out);
}

/** Every declared option: what test/options/everyPath.test.ts gives each entry point. */
export function declaredOptions(): ReadonlyArray<readonly [string, Declared]> {
  return Object.entries(OPTIONS);
}
