import type CliProgress from 'cli-progress';
import { messageOf } from '../internal/messageOf';
import { requireOptional } from '../internal/requireOptional';
import { formatProgressLine } from './formatProgressLine';

/** What the line is drawn from: the figures each `onProgress` call carries. */
export interface ProgressFigures {
  done: number;
  total: number;
  running: number;
  outcomes: Readonly<Record<string, number>>;
  usage: { costUsd: number };
}

/** A progress line being drawn; `stop` draws it a last time and leaves it on screen. */
export interface ProgressBar {
  update(figures: ProgressFigures): void;
  stop(): void;
}

export interface ProgressBarOptions {
  /** Runs in the batch. */
  total: number;
  /** Runs already ended when it starts (a resumed batch's). */
  done: number;
  /** The batch's `total.maxCostUsd`, or a function read at each redraw (a pausing cap is raised as the batch runs). */
  capUsd?: number | (() => number);
  /**
   * The spend now, read at each redraw: a run's calls cost money between its start and its end,
   * and the line shows it as it is spent. Default: the spend the last update carried.
   */
  spentUsd?: () => number;
  /** Default `process.stderr`: standard output is the program's. */
  stream?: NodeJS.WriteStream;
  /** Told once if drawing fails; the line is then given up and the batch goes on. */
  onProblem?: (message: string) => void;
}

/**
 * A progress line on `stream`, redrawn in place, or undefined when `stream` is not a terminal: on
 * a pipe or a file nothing is written, since a line redrawn with control characters would only
 * litter a log. Drawing never throws into the batch.
 */
export function openProgressBar(options: ProgressBarOptions): ProgressBar | undefined {
  const { total, done, capUsd, spentUsd, stream = process.stderr, onProblem } = options;
  if (stream.isTTY !== true) return undefined;
  let figures: ProgressFigures = { done, total, running: 0, outcomes: {}, usage: { costUsd: 0 } };
  let broken = false;
  const giveUp = (what: string, error: unknown): void => {
    if (broken) return;
    broken = true;
    onProblem?.(
      `the progress line failed to ${what} (${messageOf(error)}); it is not drawn any more, the batch goes on`,
    );
  };
  const guard = (what: string, act: () => void): void => {
    if (broken) return;
    try {
      act();
    } catch (error) {
      giveUp(what, error);
    }
  };
  const cliProgress = requireOptional<typeof CliProgress>('cli-progress');
  const bar = new cliProgress.SingleBar({
    stream,
    barsize: 10,
    // Neither the cursor is hidden nor wrapping turned off: a process killed mid-batch would leave the terminal so.
    hideCursor: false,
    linewrap: true,
    // A log line written over the bar is drawn over again at the next frame.
    forceRedraw: true,
    // Also called from cli-progress's own timer, where a throw would end the process: it never throws.
    format: (barOptions, params) => {
      if (broken) return '';
      try {
        return formatProgressLine(
          {
            done: figures.done,
            total: figures.total,
            failed: failedOf(figures.outcomes),
            skipped: figures.outcomes.skipped ?? 0,
            running: figures.running,
            costUsd: spentUsd === undefined ? figures.usage.costUsd : spentUsd(),
            ...(capUsd === undefined ? {} : { capUsd: typeof capUsd === 'function' ? capUsd() : capUsd }),
            // cli-progress says 'INF' or 'NULL' while it cannot tell.
            ...(typeof params.eta === 'number' ? { etaSeconds: params.eta } : {}),
            bar: `[${cliProgress.Format.BarFormat(params.progress, barOptions)}]`,
          },
          params.maxWidth,
        );
      } catch (error) {
        giveUp('draw', error);
        return '';
      }
    },
  });
  guard('start', () => bar.start(total, done));
  return {
    update: (next) =>
      guard('update', () => {
        figures = next;
        bar.update(next.done);
      }),
    // Even once given up: it ends cli-progress's timer, which would keep the process alive.
    stop: () => {
      try {
        bar.stop();
      } catch (error) {
        giveUp('stop', error);
      }
    },
  };
}

/** Runs that ended otherwise than by ending their turn, as the batch report counts them. */
function failedOf(outcomes: Readonly<Record<string, number>>): number {
  let failed = 0;
  for (const [outcome, count] of Object.entries(outcomes))
    if (outcome !== 'end_of_turn' && outcome !== 'skipped') failed += count;
  return failed;
}
