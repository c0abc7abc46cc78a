import type { Budget } from '../../agent/money/Budget';
import { formatUsd } from '../../internal/formatUsd';
import { messageOf } from '../../internal/messageOf';
import { InvalidArgumentError } from '../../machine/InvalidArgumentError';
import type { CapPause } from '../keeping/capPause';
import type { RaiseBox } from './RaiseBox';
import type { RaisesRead } from '../keeping/raiseRequests';
import { raiseProblem } from '../../internal/raiseProblem';

/** One raise of a batch's paused cap, as its report lists it. */
export interface CapRaise {
  /** When it took effect, by the batch's clock (a BullMQ batch's: Redis's, epoch milliseconds). */
  at: number;
  /** The cap before and after. */
  fromUsd: number;
  toUsd: number;
  /**
   * Who asked: `onPause`'s `raise` in this process (a BullMQ batch's handle, `raise()`), the
   * history folder's raise file (`agent-sm raise <folder>`), the batch's store (`agent-sm raise
   * --store`), or, for a BullMQ batch, `raiseBatch()` from any process (`agent-sm raise --redis`).
   */
  by: 'handle' | 'folder' | 'store' | 'redis';
}

/** What `runBatch`'s `onPause` gets when the batch pauses at its cap: the figures, and how to go on. */
export interface BatchPause {
  /** The cap in force, and what was spent and held under it when the first run was refused. */
  capUsd: number;
  spentUsd: number;
  heldUsd: number;
  /**
   * Raises the cap to `maxCostUsd` (above the cap in force): the runs parked at it go on, and
   * tasks not started start. May be called at once or any time later while the batch runs.
   */
  raise: (limits: { maxCostUsd: number }) => void;
}

/** The batch's logger, each level never throwing. */
type BatchLog = { info: (m: string) => void; warn: (m: string) => void; error: (m: string) => void };

/** How often a paused batch reads the raises asked of it (its folder's raise file, or its store). */
export const RAISE_POLL_MS = 200;
/** A batch that is not paused reads them every this many polls (2 s): a store is not asked 5 times a second for a whole batch. */
const RUNNING_POLL_EVERY = 10;

/**
 * The raises of a batch whose total cap pauses (`total.whenSpent: 'pause'`): from `onPause`'s
 * `raise` and from the batch's raise box (its history folder's raise file, or its store), which
 * it reads at `start` (a resumed batch starts from the raises asked before), as a run pauses at
 * the cap, and then every `RAISE_POLL_MS` while paused (every 2 s while not).
 */
export class CapRaises {
  readonly #pool: Budget;
  readonly #clock: () => number;
  readonly #box: RaiseBox | undefined;
  readonly #by: CapRaise['by'];
  readonly #onPause: ((pause: BatchPause) => unknown) | undefined;
  readonly #onRaise: () => void;
  readonly #log: BatchLog | undefined;
  readonly #list: CapRaise[] = [];
  /** Raise requests read so far. */
  #lines = 0;
  /** A read of the box under way: polls never overlap. */
  #reading: Promise<void> | undefined;
  /** The pause notes in the order made, one at a time: the box ends with the last. */
  #noted: Promise<void> = Promise.resolve();
  /** The raise count `onPause` was last told at: once per pause. */
  #toldAt = -1;
  #timer: ReturnType<typeof setInterval> | undefined;
  /** Polls since the start: one in RUNNING_POLL_EVERY reads the box while the batch is not paused. */
  #ticks = 0;

  constructor(options: {
    pool: Budget;
    clock: () => number;
    box: RaiseBox | undefined;
    /** How a raise read from `box` is listed: `folder` or `store`. */
    by?: CapRaise['by'];
    onPause: ((pause: BatchPause) => unknown) | undefined;
    onRaise: () => void;
    log: BatchLog | undefined;
  }) {
    this.#pool = options.pool;
    this.#clock = options.clock;
    this.#box = options.box;
    this.#by = options.by ?? 'folder';
    this.#onPause = options.onPause;
    this.#onRaise = options.onRaise;
    this.#log = options.log;
  }

  /** The raises so far, in order. */
  get list(): CapRaise[] {
    return this.#list.map((r) => ({ ...r }));
  }

  /**
   * Takes the raises the box holds already, then reads it every `RAISE_POLL_MS` while paused
   * (every RUNNING_POLL_EVERY of them while not) until `stop()`.
   * The timer keeps the process alive while the batch runs, box or not: a paused batch has
   * nothing else pending, and the process would end with it unfinished.
   */
  async start(): Promise<void> {
    // A pause noted by a batch killed while paused says nothing of this one.
    this.#note(undefined);
    await this.#poll();
    this.#timer = setInterval(() => {
      if (this.#paused || ++this.#ticks % RUNNING_POLL_EVERY === 0) void this.#poll();
    }, RAISE_POLL_MS);
  }

  /** Stops reading; resolves once the box says the batch is no longer paused. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#reading;
    this.#note(undefined);
    await this.#noted;
  }

  /** Notes the pause in the box (or that there is none), after the notes before: a failure is logged, the batch goes on. */
  #note(pause: CapPause | undefined): void {
    const box = this.#box;
    if (box === undefined) return;
    this.#noted = this.#noted.then(() =>
      box
        .notePause(pause)
        .catch((error: unknown) => this.#log?.warn(`cannot note the pause of ${box.where}: ${messageOf(error)}`)),
    );
  }

  /** Raises the cap; `limits` is checked (only `maxCostUsd`, above the cap in force). */
  raise(limits: unknown, by: CapRaise['by']): void {
    const fromUsd = this.#pool.limits.maxCostUsd!;
    const problem = raiseProblem(limits, fromUsd);
    if (problem !== undefined) throw new InvalidArgumentError(problem.name, problem.expected, problem.value);
    const { maxCostUsd } = limits as { maxCostUsd: number };
    this.#pool.raise(maxCostUsd);
    this.#note(undefined);
    this.#list.push({ at: this.#clock(), fromUsd, toUsd: maxCostUsd, by });
    this.#log?.info(`the batch's cap is raised from ${formatUsd(fromUsd)} to ${formatUsd(maxCostUsd)}`);
    this.#onRaise();
  }

  /** Whether a run waits at the cap in force (one paused since the last raise). */
  get #paused(): boolean {
    return this.#toldAt === this.#pool.raises;
  }

  /** A run parked at the cap: the first since the last raise tells `onPause`, and reads the box (a raise asked already is taken at once). */
  paused(): void {
    const raises = this.#pool.raises;
    if (this.#toldAt === raises) return;
    this.#toldAt = raises;
    void this.#poll();
    const capUsd = this.#pool.limits.maxCostUsd!;
    const spentUsd = this.#pool.usage.costUsd;
    const heldUsd = this.#pool.held;
    // For the CLI in another process: `agent-sm inspect` and `watch` say the batch waits for a raise.
    this.#note({ at: this.#clock(), capUsd, spentUsd, heldUsd });
    this.#log?.info(
      `the batch pauses at its cap of ${formatUsd(capUsd)}: ${formatUsd(this.#pool.usage.costUsd)} spent; raise it to go on`,
    );
    if (this.#onPause === undefined) return;
    const pause: BatchPause = {
      capUsd,
      spentUsd,
      heldUsd,
      raise: (limits) => this.raise(limits, 'handle'),
    };
    try {
      const returned = this.#onPause(pause);
      // An async callback's rejection would otherwise surface as an unhandled rejection.
      if (returned instanceof Promise)
        returned.catch((error: unknown) => this.#log?.error(`onPause failed: ${messageOf(error)}`));
    } catch (error) {
      this.#log?.error(`onPause threw: ${messageOf(error)}; the batch stays paused`);
    }
  }

  /** Reads the raises asked since the last read and takes each above the cap in force. */
  #poll(): Promise<void> {
    const box = this.#box;
    if (box === undefined || this.#reading !== undefined) return this.#reading ?? Promise.resolve();
    this.#reading = box
      .read(this.#lines)
      .then(
        (read) => this.#take(read),
        (error: unknown) => this.#log?.error(`cannot read the raises of ${box.where}: ${messageOf(error)}`),
      )
      .finally(() => (this.#reading = undefined));
    return this.#reading;
  }

  #take(read: RaisesRead): void {
    this.#lines = read.lines;
    for (const problem of read.problems) this.#log?.error(`${problem}; skipped`);
    for (const request of read.requests) {
      const now = this.#pool.limits.maxCostUsd!;
      if (request.maxCostUsd <= now) {
        this.#log?.warn(
          `raise ${request.line} of ${this.#box!.where} asks for ${formatUsd(request.maxCostUsd)}, not above the cap in force (${formatUsd(now)}); skipped`,
        );
        continue;
      }
      this.raise({ maxCostUsd: request.maxCostUsd }, this.#by);
    }
  }
}
