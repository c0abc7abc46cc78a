import type { Command } from 'commander';
import { pollInterval } from './cliArguments';
import { loadOptions, type StoreReading } from './readingOptions';
import { storeFor, type StoreCommandIO } from './storeCommands';
import { watchBatch, type WatchIO } from './watchBatch';
import { STORE_POLL_MS, watchStoreBatch } from './watchStoreBatch';

/**
 * `agent-sm watch <path>` (a batch's folder or a run's file) and `agent-sm watch --store URL
 * <batchId>`: the same board, fed by the folder or by the store. `exit` takes the exit code.
 */
export function addWatchCommand(
  program: Command,
  io: WatchIO & Pick<StoreCommandIO, 'opened'>,
  exit: (code: number) => void,
): void {
  program
    .command('watch')
    .description(
      'Watch a batch (its history folder, or with --store its id) or one run (its file) while it runs: progress, spend against each cap, the runs in flight with their state and time in it, failures as they happen. Redraws in place on a terminal, prints plain lines otherwise; ends when the batch ends.',
    )
    .argument(
      '<path>',
      "a batch's history folder (with its batch.json), or one run's history file; with --store, a batch id",
    )
    .option(
      '--store <url>',
      'watch a batch a store keeps (file:///… or postgres://…), polled: <path> is then its batch id',
    )
    .option('--stay', 'keep watching after the batch ended (until Ctrl-C)')
    .option(
      '--poll-ms <n>',
      `how often the batch is looked at, in milliseconds: a store at every look (default ${STORE_POLL_MS}), a folder when no change event came (default 250)`,
      pollInterval,
    )
    .action(async (target: string, opts: StoreReading & { stay?: boolean; pollMs?: number }) => {
      const options = {
        stay: opts.stay === true,
        ...loadOptions(opts),
        ...(opts.pollMs === undefined ? {} : { pollMs: opts.pollMs }),
      };
      const watchIO: WatchIO = {
        stdout: io.stdout,
        stderr: io.stderr,
        signal: io.signal,
        isTTY: io.isTTY,
        columns: io.columns,
        rows: io.rows,
      };
      exit(
        opts.store === undefined
          ? await watchBatch(target, options, watchIO)
          : await watchStoreBatch(await storeFor(opts.store, io), target, options, watchIO),
      );
    });
}
