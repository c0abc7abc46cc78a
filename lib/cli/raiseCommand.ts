import { type Command, InvalidArgumentError as CommanderArgumentError } from 'commander';
import { folderHeld } from '../batch/lockFolder';
import { requestRaise } from '../batch/raiseRequests';
import { escapeControl } from '../internal/escapeControl';
import { formatUsd } from '../internal/formatUsd';

/**
 * `agent-sm raise <folder> --total-usd N`: asks the batch of a history folder, run with
 * `total.whenSpent: 'pause'`, to raise its cap (`requestRaise`); the running batch takes it
 * within a poll, a resumed one starts from it. A bad folder or figure is an error (exit 2).
 */
export function addRaiseCommand(program: Command, io: { stdout: (text: string) => void }): void {
  program
    .command('raise')
    .description(
      "Raise the total dollar cap of a batch paused at it (run with total: { maxCostUsd, whenSpent: 'pause' }): its parked runs and the tasks not started go on.",
    )
    .argument('<folder>', "the batch's history folder (with its batch.json)")
    .requiredOption('--total-usd <usd>', 'the new cap in USD, above the cap in force', positiveUsd)
    .option('--redis <url>', 'for a BullMQ batch: not supported yet (submitBatch refuses whenSpent: pause)')
    .action(async (folder: string, opts: { totalUsd: number; redis?: string }) => {
      if (opts.redis !== undefined)
        throw new Error(
          "--redis: a BullMQ batch cannot pause at its cap yet (submitBatch refuses whenSpent: 'pause'), so there is no cap to raise there",
        );
      const from = await requestRaise(folder, opts.totalUsd);
      const running = folderHeld(folder)
        ? 'the running batch takes it within a second'
        : 'no batch runs there now: resuming it (runBatch with resume: true) starts from this cap';
      io.stdout(
        `agent-sm: asked the batch in ${escapeControl(folder)} to raise its cap from ${formatUsd(from)} to ${formatUsd(opts.totalUsd)}; ${running}\n`,
      );
    });
}

function positiveUsd(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n <= 0)
    throw new CommanderArgumentError(`expected a positive number of USD, got ${JSON.stringify(value)}`);
  return n;
}
