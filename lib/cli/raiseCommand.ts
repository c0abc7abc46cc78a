import { type Command, InvalidArgumentError as CommanderArgumentError } from 'commander';
import { folderHeld } from '../batch/keeping/lockFolder';
import { requestRaise } from '../batch/raises/requestRaise';
import { readBatchFolder } from '../batch/reading/readBatchFolder';
import { ignore } from '../internal/ignore';
import { plural } from '../internal/text';
import { escapeControl } from '../internal/escapeControl';
import { formatUsd } from '../internal/formatUsd';
import { storeBatchSource } from '../batch/reading/BatchSource';
import { readBatchSource } from '../batch/reading/readBatchFolder';
import type { BatchFolder } from '../batch/reading/readBatchFolder';
import { loadBullmq } from './loadBullmq';
import { safeUrl } from './openStore';
import { storeFor, type StoreCommandIO } from './storeCommands';

/**
 * `agent-sm raise <folder> --total-usd N`: asks the batch of a history folder, run with
 * `total.whenSpent: 'pause'`, to raise its cap (`requestRaise`); the running batch takes it
 * within a poll, a resumed one starts from it. `agent-sm raise --store URL <batchId>
 * --total-usd N`: the same for a store's batch, its request kept in the store. `agent-sm raise
 * --redis URL --batch ID --total-usd N`: raises a BullMQ batch's cap in Redis (`raiseBatch`), at
 * once. A bad folder, batch or figure is an error (exit 2).
 */
export function addRaiseCommand(program: Command, io: Pick<StoreCommandIO, 'stdout' | 'opened'>): void {
  program
    .command('raise')
    .description(
      "Raise the total dollar cap of a batch paused at it (run with total: { maxCostUsd, whenSpent: 'pause' }): its parked runs and the tasks not started go on.",
    )
    .argument(
      '[folder]',
      "the batch's history folder (with its batch.json); or, with --store or --redis, the batch's id",
    )
    .requiredOption('--total-usd <usd>', 'the new cap in USD, above the cap in force', positiveUsd)
    .option('--store <url>', "a store's batch (file:///… or postgres://…); give the batch's id for <folder>")
    .option('--redis <url>', 'a BullMQ batch: the Redis it is in (redis://host:port)')
    .option('--batch <id>', 'with --redis: the batch id (submitBatch({ batchId }))')
    .option('--queue <name>', 'with --redis: its queue (default: the one queue holding a batch of this id)')
    .option('--prefix <prefix>', "with --redis: BullMQ's key prefix (default bull, or found with the queue)")
    .action(
      async (
        folder: string | undefined,
        opts: { totalUsd: number; store?: string; redis?: string; batch?: string; queue?: string; prefix?: string },
      ) => {
        if (opts.redis !== undefined && opts.store !== undefined)
          throw new Error('give --redis (a BullMQ batch) or --store (a store batch), not both');
        if (opts.redis !== undefined) return raiseInRedis(folder, opts, io);
        for (const key of ['batch', 'queue', 'prefix'] as const)
          if (opts[key] !== undefined) throw new Error(`--${key} is for a BullMQ batch: give --redis URL with it`);
        if (opts.store !== undefined) return raiseInStore(folder, opts.store, opts.totalUsd, io);
        if (folder === undefined)
          throw new Error(
            'give the batch folder, --store URL <batchId> for a store batch, or --redis URL --batch ID for a BullMQ batch',
          );
        const held = folderHeld(folder);
        if (!held)
          assertNotEnded(await readBatchFolder(folder, { onWarning: ignore }).catch(() => undefined), {
            what: `the batch in ${escapeControl(folder)}`,
            anew: 'as a new batch in another folder',
          });
        const from = await requestRaise(folder, opts.totalUsd);
        const running = held
          ? 'the running batch takes it within a second'
          : 'no batch runs there now: resuming it (runBatch with resume: true) starts from this cap';
        io.stdout(
          `agent-sm: asked the batch in ${escapeControl(folder)} to raise its cap from ${formatUsd(from)} to ${formatUsd(opts.totalUsd)}; ${running}\n`,
        );
      },
    );
}

/** A store batch's raise: its request kept in the store, for the running batch or its resume to take. */
async function raiseInStore(
  batchId: string | undefined,
  url: string,
  maxCostUsd: number,
  io: Pick<StoreCommandIO, 'stdout' | 'opened'>,
): Promise<void> {
  if (batchId === undefined) throw new Error("--store: give the batch's id (agent-sm raise --store URL <batchId>)");
  const store = await storeFor(url, io);
  const source = await storeBatchSource(store, batchId);
  if (!source.running)
    assertNotEnded(await readBatchSource(source, { onWarning: ignore }), {
      what: `batch ${escapeControl(batchId)} of ${escapeControl(store.name)}`,
      anew: 'as a new batch under another id',
    });
  const from = await requestRaise({ store, batchId }, maxCostUsd);
  const running = source.running
    ? 'the running batch takes it within a second'
    : 'no batch runs it now: resuming it (runBatch with resume: true) starts from this cap';
  io.stdout(
    `agent-sm: asked batch ${escapeControl(batchId)} of ${escapeControl(store.name)} to raise its cap from ${formatUsd(from)} to ${formatUsd(maxCostUsd)}; ${running}\n`,
  );
}

/** A BullMQ batch's raise, through `agent-sm/bullmq` (loaded only now: the CLI runs without BullMQ installed). */
async function raiseInRedis(
  positional: string | undefined,
  opts: { totalUsd: number; redis?: string; batch?: string; queue?: string; prefix?: string },
  io: { stdout: (text: string) => void },
): Promise<void> {
  if (positional !== undefined && opts.batch !== undefined && positional !== opts.batch)
    throw new Error(`give the batch id once: --batch ${opts.batch} or ${positional}, not both`);
  const batchId = opts.batch ?? positional;
  if (batchId === undefined) throw new Error('--redis: give the batch id (--batch ID)');
  const loaded = await loadBullmq<{
    raiseBatch: (
      o: Record<string, unknown>,
    ) => Promise<{ fromUsd: number; toUsd: number; name: string; prefix: string }>;
  }>();
  const raised = await loaded.raiseBatch({
    connection: opts.redis!,
    batchId,
    maxCostUsd: opts.totalUsd,
    ...(opts.queue === undefined ? {} : { name: opts.queue }),
    ...(opts.prefix === undefined ? {} : { prefix: opts.prefix }),
  });
  io.stdout(
    `agent-sm: raised the cap of batch ${escapeControl(batchId)} (queue ${escapeControl(`${raised.prefix}:${raised.name}`)} at ${safeUrl(opts.redis!)}) from ${formatUsd(raised.fromUsd)} to ${formatUsd(raised.toUsd)}; its workers go on\n`,
  );
}

/** Outcomes of a folder's run that a raise (then a resume) can still move on: not run to an end. */
const UNENDED: ReadonlySet<string> = new Set(['cut_off', 'skipped', 'pending', 'running', 'unreadable']);

/**
 * Refuses to raise the cap of a batch that no process runs and whose every task ran to an end:
 * nothing waits for the raise, and a resume runs no ended task again. A batch that cannot be
 * read, or lists no task, is left to `requestRaise`'s checks.
 */
function assertNotEnded(batch: BatchFolder | undefined, said: { what: string; anew: string }): void {
  if (batch === undefined || batch.manifest === undefined || batch.runs.length === 0) return;
  if (batch.runs.some((r) => UNENDED.has(r.outcome))) return;
  const how = Object.entries(batch.totals.outcomes)
    .map(([outcome, n]) => `${n} ${escapeControl(outcome)}`)
    .join(', ');
  throw new Error(
    `${said.what} has ended: ${plural(batch.runs.length, 'run')} ran to an end (${how}), ` +
      `${formatUsd(batch.totals.costUsd)} spent, and none waits for a raise; ` +
      `to run its tasks under a higher cap, run them ${said.anew}`,
  );
}

/** `--total-usd`: a plain decimal number of dollars above 0 (`30`, `12.50`); no hex, exponent or sign. */
function positiveUsd(value: string): number {
  const n = Number(value);
  if (!/^(?:\d+(?:\.\d+)?|\.\d+)$/.test(value) || !Number.isFinite(n) || n <= 0)
    throw new CommanderArgumentError(
      `expected a plain decimal number of USD above 0 (e.g. 30 or 12.50), got ${JSON.stringify(value)}`,
    );
  return n;
}
