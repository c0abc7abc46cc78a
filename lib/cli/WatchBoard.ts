import ansiEscapes from 'ansi-escapes';
import type { BatchManifest } from '../batch/keeping/batchManifest';
import type { RaiseRequest } from '../batch/keeping/raiseRequests';
import type { RunLines } from '../batch/reading/BatchSource';
import { readHistoryInto } from '../history/loadHistory';
import { attemptSpends } from '../history/attemptSpends';
import { escapeControl } from '../internal/escapeControl';
import { formatTime } from '../internal/formatTime';
import { formatSpend, type SpendFigures } from '../internal/formatSpend';
import { messageOf } from '../internal/messageOf';
import { Pieces } from './Pieces';
import type { CapPause } from '../batch/keeping/capPause';
import { formatCapPause } from './formatCapPause';
import { renderWatch } from './renderWatch';
import { WatchState, type WatchEvent } from './WatchState';

/** Where `watch` writes, and how. */
export interface WatchIO {
  stdout(text: string): void;
  stderr(text: string): void;
  /** Ends the watch (Ctrl-C). */
  signal?: AbortSignal | undefined;
  /** Redraw in place (a terminal) rather than print lines. */
  isTTY?: boolean | undefined;
  columns?: number | undefined;
  rows?: number | undefined;
}

/** Options of `watchBatch` and `watchStoreBatch`. */
export interface WatchOptions {
  /** Keep watching after the batch ended. */
  stay?: boolean;
  salvage?: boolean;
  maxLineBytes?: number;
  /**
   * How often the batch is looked at: a folder when no change event came (default 250 ms), a
   * store at every look (default 1000 ms).
   */
  pollMs?: number;
  /** How often a terminal board is redrawn with nothing new (its times move on). Default 1000 ms. */
  redrawMs?: number;
}

/** What feeds a board: a batch's history folder (or one run's file), or a store's batch. */
export interface WatchSource {
  /** The batch at the board's top: the folder, or the batch as the store names it. */
  readonly label: string;
  /** What `agent-sm raise` takes to name the batch (its folder, or `--store URL <batchId>`); the label when left out. */
  readonly raiseArgs?: readonly string[];
  /**
   * Reads what is new into `board`: the manifest, the runs seen (`board.follow`) and their new
   * lines, the raises, whether the batch is over (`board.state.over`). It resolves once the
   * board has read every line pushed (`board.settle()`), so what is drawn next is up to date.
   */
  scan(board: WatchBoard): Promise<void>;
  /** Calls `poke` whenever something may have changed between looks; returns what stops it. */
  listen?(poke: () => void): () => void;
}

/** A run whose lines the board reads as they are pushed. */
export interface FollowedRun {
  readonly id: string;
  readonly pieces: Pieces;
  /** Its reader stopped at a line it could not read: nothing more of it is read. */
  failed: boolean;
}

/**
 * The live board of `agent-sm watch`, whatever feeds it: each run's lines read (with the
 * reading options) into one `WatchState`, drawn by `renderWatch` in place on a terminal, or
 * printed as plain lines of what happens (runs started, finished, failed with why, progress)
 * otherwise. `show` looks at its source at every poke (the poll, a change event) until every
 * task is reported, unless `stay`, or `signal` aborts.
 */
export class WatchBoard {
  readonly state = new WatchState();
  /** The batch's manifest (its caps, when it started), once the source has read it. */
  manifest: BatchManifest | undefined;
  readonly #options: WatchOptions & { pollMs: number };
  readonly #io: WatchIO;
  readonly #tty: boolean;
  readonly #runs = new Map<FollowedRun, Promise<void>>();
  /** Attempts set aside being read, for their runs' spend. */
  readonly #earlier = new Set<Promise<void>>();
  /** Why each run that could not be read was not, in the order met. */
  readonly #unreadable: string[] = [];
  /** The raises of the batch's paused cap, in order. */
  readonly #raises: RaiseRequest[] = [];
  /** The batch waits at its dollar cap for a raise (its folder's pause file), as of the last look. */
  #paused: CapPause | undefined;
  /** When the pause last printed as a line began (piped): once per pause. */
  #pauseTold: number | undefined;
  readonly #costHistory: number[] = [];
  /** The source's `raiseArgs`, once `show` started. */
  #raiseArgs: readonly string[] = [];
  #drawn = 0;
  #lastProgress = '';

  constructor(options: WatchOptions & { pollMs: number }, io: WatchIO) {
    this.#options = options;
    this.#io = io;
    this.#tty = io.isTTY === true;
  }

  /** Starts reading run `id`'s lines, named `name` in messages, as they are pushed to its pieces. */
  follow(id: string, name: string): FollowedRun {
    const run: FollowedRun = { id, pieces: new Pieces(), failed: false };
    this.state.run(id);
    const { salvage, maxLineBytes } = this.#options;
    const reading = readHistoryInto(
      name,
      {
        input: run.pieces,
        salvage: salvage === true,
        ...(maxLineBytes === undefined ? {} : { maxLineBytes }),
        onWarning: (w) => this.warn(w.message),
      },
      (line) => this.state.add(id, line).forEach((event) => this.#print(event)),
    ).then(
      () => undefined,
      (error: unknown) => {
        run.failed = true;
        run.pieces.drop();
        this.#unreadable.push(messageOf(error));
        this.#print(this.state.unreadable(id, messageOf(error), Date.now()));
      },
    );
    this.#runs.set(run, reading);
    return run;
  }

  /**
   * Reads the attempts of run `id` a resume set aside (`<file>.interrupted`, …, the oldest
   * first), so its spend adds them up as `inspect` does; `settle` waits for them. One that
   * cannot be read adds nothing, as on resume.
   */
  earlier(id: string, attempts: readonly RunLines[]): void {
    if (attempts.length === 0) return;
    const { maxLineBytes } = this.#options;
    const reading = (async () => {
      const spends = await attemptSpends(attempts, maxLineBytes === undefined ? {} : { maxLineBytes });
      if (this.state.runs.has(id)) this.state.earlier(id, spends);
    })();
    this.#earlier.add(reading);
    void reading.finally(() => this.#earlier.delete(reading));
  }

  /** Stops reading `run` and forgets what it said, to read it again from its start (`follow`). */
  forget(run: FollowedRun): void {
    run.pieces.drop();
    this.state.runs.delete(run.id);
  }

  /** Resolves once every run's reader has read what was pushed to it. */
  async settle(): Promise<void> {
    await Promise.all([...this.#runs.keys()].map((run) => run.pieces.taken()));
    await Promise.all(this.#earlier);
  }

  /** A raise of the batch's paused cap: drawn on the board, a line when piped. */
  raise(raise: RaiseRequest): void {
    this.#raises.push({ maxCostUsd: raise.maxCostUsd, at: raise.at });
    if (!this.#tty)
      this.#io.stdout(`${formatTime(raise.at, 'HH:mm:ss')}  cap raised to $${raise.maxCostUsd.toFixed(4)}\n`);
  }

  /** The raises of the batch's paused cap so far, in order. */
  get raises(): readonly RaiseRequest[] {
    return this.#raises;
  }

  /**
   * Whether the batch waits at its dollar cap for a raise (`undefined`: it does not), as of the
   * runs read so far (call it after `settle`): drawn on the board, a line when piped, once per
   * pause, with the figures `inspect` says.
   */
  pause(paused: CapPause | undefined): void {
    this.#paused = paused;
    if (paused === undefined || this.#tty || this.#pauseTold === paused.at) return;
    this.#pauseTold = paused.at;
    const lines = formatCapPause(paused, this.#raiseArgs, this.state.spend);
    this.#io.stdout(`${formatTime(paused.at, 'HH:mm:ss')}  ${lines.paused}; ${lines.raise}\n`);
  }

  /** A warning on stderr, one line. */
  warn(text: string): void {
    this.#io.stderr(`agent-sm: warning: ${escapeControl(text)}\n`);
  }

  /**
   * Looks at `source` at every poke and draws, until the batch ended (unless `stay`) or the
   * signal aborts. Resolves to the exit code: 2 when a run could not be read (each named on
   * stderr, as every command reports an unreadable file), else 0.
   */
  async show(source: WatchSource): Promise<number> {
    this.#raiseArgs = source.raiseArgs ?? [source.label];
    const { stay = false, pollMs, redrawMs = 1000 } = this.#options;
    const signal = this.#io.signal ?? new AbortController().signal;
    let wake: (() => void) | undefined;
    let changed = true;
    const poke = (): void => {
      changed = true;
      wake?.();
    };
    const unlisten = source.listen?.(poke);
    const poll = setInterval(poke, pollMs);
    const redraw = setInterval(() => {
      if (this.#tty) this.#draw(source.label);
    }, redrawMs);
    signal.addEventListener('abort', poke, { once: true });
    try {
      while (!signal.aborted) {
        if (changed) {
          changed = false;
          await source.scan(this);
          this.#draw(source.label);
          if (!stay && this.state.ended) break;
          continue;
        }
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
      }
    } finally {
      clearInterval(poll);
      clearInterval(redraw);
      unlisten?.();
      signal.removeEventListener('abort', poke);
      for (const run of this.#runs.keys()) run.pieces.end();
      await Promise.all(this.#runs.values());
      if (this.#tty) this.#io.stdout(ansiEscapes.cursorShow);
    }
    for (const why of this.#unreadable) this.#io.stderr(`agent-sm: error: ${escapeControl(why)}\n`);
    return this.#unreadable.length > 0 ? 2 : 0;
  }

  #print(event: WatchEvent): void {
    if (!this.#tty) this.#io.stdout(`${formatTime(event.at, 'HH:mm:ss')}  ${escapeControl(event.text)}\n`);
  }

  /** The board in place on a terminal; else a progress line when the progress changed. */
  #draw(label: string): void {
    const { state } = this;
    this.#costHistory.push(state.spend.costUsd);
    if (this.#costHistory.length > 64) this.#costHistory.shift();
    const now = Date.now();
    if (this.#tty) {
      const raised = this.#raises.at(-1);
      const lines = renderWatch(state, {
        source: label,
        caps: {
          ...(this.manifest?.limits.total ?? {}),
          ...(raised === undefined ? {} : { maxCostUsd: raised.maxCostUsd }),
        } as Record<string, unknown>,
        raises: this.#raises,
        paused: this.#paused,
        raiseArgs: this.#raiseArgs,
        startedAt: this.manifest?.startedAt,
        costHistory: this.#costHistory,
        now,
        columns: this.#io.columns ?? 80,
        rows: this.#io.rows ?? 24,
      });
      const erase = this.#drawn === 0 ? ansiEscapes.cursorHide : ansiEscapes.eraseLines(this.#drawn + 1);
      this.#io.stdout(`${erase}${lines.join('\n')}\n`);
      this.#drawn = lines.length;
      return;
    }
    const progress = progressLine(state);
    if (progress !== this.#lastProgress) {
      this.#lastProgress = progress;
      this.#io.stdout(`${formatTime(now, 'HH:mm:ss')}  progress: ${progress}, ${spentLine(state.spend)}\n`);
    }
  }
}

/**
 * `$0.0258 spent`, what the caps count (billed + uncertain, the figure `inspect` reads), then
 * the figures apart when any of it is not billed, or some call's cost is unknown:
 * `($0.0116 billed, $0.0142 uncertain (…))`.
 */
export function spentLine(spend: SpendFigures): string {
  const spent = `$${spend.costUsd.toFixed(4)} spent`;
  return (spend.uncertainUsd ?? 0) > 0 || (spend.releasedUsd ?? 0) > 0 || (spend.unpricedCalls ?? 0) > 0
    ? `${spent} (${formatSpend(spend)})`
    : spent;
}

/** `3/5 finished, 1 skipped, 1 cut off` (over) or `1/5 finished, 2 pending` (running): the plain line's progress. */
function progressLine(state: WatchState): string {
  const ids = state.tasks ?? [...state.runs.keys()];
  const finished = ids.filter((id) => state.runs.get(id)?.outcome !== undefined).length;
  let progress = `${finished}/${ids.length} finished`;
  if (state.tasks !== undefined && !state.over) {
    // While the batch runs, a task with no run yet may still start: pending, never skipped.
    const pending = ids.filter((id) => !state.runs.has(id)).length;
    if (pending > 0) progress += `, ${pending} pending`;
  }
  if (state.tasks !== undefined && state.over) {
    // The batch is over: what did not finish was skipped (no run) or cut off (a run that did not end).
    const skipped = ids.filter((id) => !state.runs.has(id)).length;
    const cutOff = ids.filter((id) => {
      const run = state.runs.get(id);
      return run !== undefined && run.outcome === undefined && run.unreadable === undefined;
    }).length;
    progress += `${skipped > 0 ? `, ${skipped} skipped` : ''}${cutOff > 0 ? `, ${cutOff} cut off` : ''}`;
  }
  return progress;
}
