// One class whose moves share one private commit path (history, sink, log, listeners), kept
// whole so it inlines (bench: transition); its types and input checks are in files of their
// own (HistorySink, StateMachineOptions, machineInputs, HistoryBuffer, TransitionValidator).
import EventEmitter from 'eventemitter3';
import type { Logger } from 'winston';
import { logSafely } from './logSafely';
import { UNKNOWN_STATE, type StateName, type UnknownState } from '../../states/StateName';
import { HistoryBuffer } from './HistoryBuffer';
import { IllegalTransitionError } from './IllegalTransitionError';
import { InvalidArgumentError } from './InvalidArgumentError';
import { levelIsFixed } from './levelIsFixed';
import { SafeListeners } from './SafeListeners';
import type { TransitionEvent, TransitionRecord } from './TransitionRecord';
import type { TransitionTable } from './TransitionTable';
import { sharedValidator, stateNode, type TransitionValidator, type StateNode } from './TransitionValidator';
import { asError } from '../internal/asError';
import { messageOf } from '../internal/messageOf';
import { isThenable } from '../internal/isThenable';
import { stackOf } from '../internal/stackOf';
import type { HistorySink, JournalLine, ResetInfo } from './HistorySink';
import { assertHistorySize, firstReading, parseEvent, resolveLogger, resolveSink } from './machineInputs';
import type { StateMachineEvents, StateMachineOptions } from './StateMachineOptions';

export type { HistorySink, JournalLine, ResetInfo } from './HistorySink';
export type { StateMachineEvents, StateMachineOptions } from './StateMachineOptions';

type EventName<S extends string> = keyof StateMachineEvents<S>;
type Listener<S extends string, E extends EventName<S>> = (...args: StateMachineEvents<S>[E]) => void;

/** A move asked for while listeners were being notified; it takes effect after them. */
type Pending<S extends string> =
  TransitionRecord<S> | { readonly reset: ResetInfo<S> } | { readonly rejected: IllegalTransitionError<S> };

/**
 * The agent flow as a synchronous, deterministic state machine: it validates every move
 * against its table, records it with its timing, and tells listeners. It does no I/O of its
 * own; logging goes to the logger given, records to the sink given.
 *
 * Run-to-completion: a move asked for from inside a listener is validated at once (against
 * the state the machine will be in by then) but takes effect after the current move has
 * finished notifying, so history and notifications stay in the order moves took effect.
 */
export class StateMachine<S extends string = StateName> {
  readonly #validator: TransitionValidator<S>;
  readonly #emitter = new EventEmitter<StateMachineEvents<S>>();
  readonly #listeners = new SafeListeners(this.#emitter as unknown as EventEmitter, (event, error) =>
    this.#listenerThrew(event, error),
  );
  readonly #history: HistoryBuffer<TransitionRecord<S>>;
  readonly #clock: () => number;
  readonly #logger: Logger | undefined;
  // The logger whose level is read on every move, to notice a change to or from `debug`; none
  // when there is no logger, or once its level is found fixed (levelIsFixed) with `debug` off.
  #watched: Logger | undefined;
  readonly #sink: HistorySink<S> | undefined;

  // The committed state (current, previous, time entered) is the newest record of the
  // history, which always keeps at least one; with none (new, or just reset) it is the
  // initial state, entered at #resetAt. A move thus stores nothing beyond its record.
  #resetAt = 0;
  // The "tail" is where the machine will be once queued moves have taken effect; outside a
  // notification it is the committed state. Moves are validated and timed against it. Its
  // node in the table's graph makes checking a move and following it one lookup.
  #tailNode: StateNode<S>;
  // A number from the start, so the time is stored unboxed, not as a heap number per move (bench: transition).
  #tailAt = 0;
  #seq = 0;
  #notifying = false;
  #draining = false;
  #queue: Pending<S>[] | undefined;
  // Cached `debug` check: re-evaluated only when the logger's level changes (NEVER: not yet).
  #loggerLevel: unknown = NEVER;
  #debug = false;
  #info = true;
  #warn = true;
  // Forced moves to log at info rather than warn (TransitionEvent.logLevel); made on first use.
  #quiet: WeakSet<TransitionRecord<S>> | undefined;

  constructor(options: StateMachineOptions<S> = {}) {
    if (typeof options !== 'object' || options === null) {
      throw new InvalidArgumentError('options', 'an object', options);
    }
    const { maxHistorySize = 100, clock = Date.now, logger, sink, table } = options;
    assertHistorySize(maxHistorySize, 'maxHistorySize');
    const now = firstReading(clock);
    this.#validator = sharedValidator<S>(table);
    this.#clock = clock;
    this.#logger = resolveLogger(logger);
    // Checked at the first move, not here: asking winston costs more than making a machine.
    this.#watched = this.#logger;
    this.#sink = resolveSink(sink);
    this.#sink?.attach?.(this.#validator.table);
    this.#history = new HistoryBuffer(maxHistorySize);
    this.#tailNode = stateNode(this.#validator, this.#validator.table.initial)!;
    this.#resetAt = this.#tailAt = now;
  }

  /** The state the machine is in. */
  get current(): S {
    return this.#history.newest()?.to ?? this.#validator.table.initial;
  }

  /**
   * The state the machine is in once the moves asked for inside listeners (queued until the
   * current move is reported) are applied: the state the next `transition()` is checked
   * against. Equals `current` outside listeners.
   */
  get pendingState(): S {
    return this.#tailNode.name;
  }

  /** The state before the last move; `'Unknown'` before the first move and after `reset()`. */
  get previous(): S | UnknownState {
    return this.#history.newest()?.from ?? UNKNOWN_STATE;
  }

  /** The table this machine enforces. */
  get table(): TransitionTable<S> {
    return this.#validator.table;
  }

  get maxHistorySize(): number {
    return this.#history.capacity;
  }

  /**
   * Moves to `to` if the table allows it from the current state, and returns the record.
   * An illegal move changes nothing: it is logged, reported to the sink and to `rejected`
   * listeners, and thrown as `IllegalTransitionError`. An unknown name throws `UnknownStateError`.
   */
  transition(to: S, event?: TransitionEvent): TransitionRecord<S> {
    let description = '';
    let data: unknown;
    if (typeof event === 'string') description = event;
    else if (event !== undefined) ({ description, data } = parseEvent(event, 'event'));
    const tail = this.#tailNode;
    const from = tail.name;
    const node = tail.next.get(to);
    if (node === undefined) this.#reject(from, to, description);
    return this.#move(from, node, description, data, false);
  }

  /**
   * Moves to `to` whatever the table says, marked `forced` in history and logged as a
   * warning. For paths the table cannot express (cancelling mid-tool, recovering a stuck
   * machine). `reason` is required: a forced move without one is impossible to debug later.
   */
  forceTransition(to: S, reason: TransitionEvent): TransitionRecord<S> {
    const { description, data } = parseEvent(reason, 'reason');
    if (description.trim() === '')
      throw new InvalidArgumentError('reason', 'a non-empty description of why the move is forced', reason);
    const logLevel = typeof reason === 'object' ? (reason as { logLevel?: unknown }).logLevel : undefined;
    if (logLevel !== undefined && logLevel !== 'warn' && logLevel !== 'info')
      throw new InvalidArgumentError('reason.logLevel', "'warn', 'info' or undefined", logLevel);
    this.#validator.assertKnown(to, 'forceTransition() target');
    return this.#move(
      this.#tailNode.name,
      stateNode(this.#validator, to)!,
      description,
      data,
      true,
      logLevel === 'info',
    );
  }

  /** A journal line to the sink, when it takes them, in order with the records; a failure is reported (`sinkError`), never thrown. Returns whether the sink takes journal lines. */
  journal(entry: JournalLine): boolean {
    const sink = this.#sink;
    if (sink?.journal === undefined) return false;
    try {
      this.#watchSink(sink.journal(entry) as unknown);
    } catch (error) {
      this.#reportSinkError(error);
    }
    return true;
  }

  /**
   * `journal`, for a line the caller must not go past until it is kept (the ledger's `reserve`):
   * the sink's commit when it gives one (a promise), else undefined (kept when the sink returned).
   * A failure is reported as by `journal`, and the commit rejects — a sink that throws (a file
   * whose write or fsync failed) too: the line was not kept, so the caller stops.
   */
  journalCommit(entry: JournalLine): PromiseLike<void> | undefined {
    const sink = this.#sink;
    if (sink?.journal === undefined) return undefined;
    let returned: unknown;
    try {
      returned = sink.journal(entry);
    } catch (error) {
      this.#reportSinkError(error);
      return Promise.reject(asError(error));
    }
    if (!isThenable(returned)) return undefined;
    const commit = returned as PromiseLike<void>;
    this.#watchSink(commit);
    return commit;
  }

  /** Whether the sink keeps journal lines (has a `journal` method). */
  get journals(): boolean {
    return this.#sink?.journal !== undefined;
  }

  /** Whether the table allows `from` → `to`. */
  canTransition(from: S, to: S): boolean {
    return this.#validator.canTransition(from, to);
  }

  /** Whether the table allows a move from the current state to `to`. */
  canMoveTo(to: S): boolean {
    return this.#validator.canTransition(this.#tailNode.name, to);
  }

  /** The states `state` (default: the current one) may move to. */
  allowedFrom(state: S = this.#tailNode.name): readonly S[] {
    return this.#validator.allowedFrom(state);
  }

  /** Milliseconds spent in the current state so far (never negative). */
  timeInState(): number {
    return Math.max(0, this.#clock() - (this.#history.newest()?.at ?? this.#resetAt));
  }

  /** The kept records, oldest first, as a new array. */
  history(): TransitionRecord<S>[] {
    return this.#history.toArray();
  }

  /** Changes the history bound; shrinking keeps the newest records. */
  setMaxHistorySize(size: number): void {
    assertHistorySize(size, 'size');
    this.#history.resize(size);
  }

  /** A turn has ended: EndOfTurn, Cancelled, BudgetExceeded or Error (or a custom terminal state). */
  isInTerminalState(): boolean {
    return this.#validator.isTerminal(this.current);
  }

  /** The turn ended badly: Error, Cancelled or BudgetExceeded (or a custom error state). */
  isInErrorState(): boolean {
    return this.#validator.isError(this.current);
  }

  /**
   * Returns to the initial state (Ready) with `previous` back to `'Unknown'`, and clears
   * the in-memory history. `seq` keeps counting, so a sink that spans resets sees unique,
   * increasing numbers; the sink's `reset()` and the `reset` event mark the break.
   */
  reset(): void {
    const at = this.#now();
    const info: ResetInfo<S> = { from: this.#tailNode.name, at, seq: this.#seq };
    this.#tailNode = stateNode(this.#validator, this.#validator.table.initial)!;
    this.#tailAt = at;
    if (this.#notifying) (this.#queue ??= []).push({ reset: info });
    else this.#applyReset(info);
  }

  /** Adds a listener; one that throws is logged and reported as `listenerError`, never propagated. */
  on<E extends EventName<S>>(event: E, listener: Listener<S, E>): this {
    this.#listeners.add(event, listener, false);
    return this;
  }

  /** Adds a listener that runs once. */
  once<E extends EventName<S>>(event: E, listener: Listener<S, E>): this {
    this.#listeners.add(event, listener, true);
    return this;
  }

  /** Removes a listener added with `on` or `once`. */
  off<E extends EventName<S>>(event: E, listener: Listener<S, E>): this {
    this.#listeners.remove(event, listener);
    return this;
  }

  /** Calls `listener` after every move; returns the function that unsubscribes it. */
  onTransition(listener: (record: TransitionRecord<S>) => void): () => void {
    this.on('transition', listener);
    return () => {
      this.off('transition', listener);
    };
  }

  // A clock that goes wrong later (NaN, a Date) would write records no file reader accepts:
  // every time the machine records (moves, rejections, resets) is checked here first.
  #now(): number {
    const at = this.#clock();
    if (typeof at !== 'number' || at - at !== 0)
      throw new InvalidArgumentError('clock()', 'a finite number of milliseconds', at);
    return at;
  }

  #move(
    from: S,
    node: StateNode<S>,
    description: string,
    data: unknown,
    forced: boolean,
    quiet = false,
  ): TransitionRecord<S> {
    const to = node.name;
    const at = this.#now();
    // Never negative (both times are finite); a small integer, 16 bytes less per record than a double (bench: memory).
    const durationMs = Math.max(0, at - this.#tailAt);
    const seq = ++this.#seq;
    // Same property order in both shapes: they share one layout (bench: transition).
    const record: TransitionRecord<S> =
      data === undefined
        ? { seq, from, to, description, at, durationMs, forced }
        : { seq, from, to, description, at, durationMs, forced, data };
    // The log level travels with the record (a queued move is logged when it takes effect), outside it.
    if (quiet) (this.#quiet ??= new WeakSet()).add(record);
    this.#tailNode = node;
    this.#tailAt = at;
    if (this.#notifying) (this.#queue ??= []).push(record);
    else this.#commit(record);
    return record;
  }

  // The one path every move takes, forced or not: state, history, sink, log, listeners.
  #commit(record: TransitionRecord<S>): void {
    this.#history.push(record);
    this.#notifying = true;
    // Sink, logger and listeners each contain their own failures; the catch is for what none
    // can (a stack overflow between them). Cheaper than `finally` when nothing throws.
    try {
      if (this.#sink !== undefined) this.#writeSink(record);
      // Inline, the common case costs a load and a comparison or two: no logger to watch, or
      // its level unchanged since last checked with `debug` off. Everything else is out of line.
      const watched = this.#watched;
      if (record.forced || (watched !== undefined && (this.#debug || levelOf(watched) !== this.#loggerLevel)))
        this.#logMove(record);
      this.#emitter.emit('transition', record);
    } catch (error) {
      this.#notifying = false;
      throw error;
    }
    this.#notifying = false;
    if (this.#queue !== undefined && this.#queue.length > 0 && !this.#draining) this.#drain();
  }

  #writeSink(record: TransitionRecord<S>): void {
    try {
      this.#watchSink(this.#sink!.write(record) as unknown, record);
    } catch (error) {
      this.#reportSinkError(error, record);
    }
  }

  #logMove(record: TransitionRecord<S>): void {
    const logger = this.#logger;
    if (logger === undefined) return;
    if (record.forced) {
      const level = this.#quiet?.has(record) === true ? 'info' : 'warn';
      if (this.#levelEnabled(logger, level))
        logSafely(logger, level, `forced transition ${record.from} → ${record.to}: ${record.description}`, {
          seq: record.seq,
          data: record.data,
        });
    } else if (this.#levelEnabled(logger, 'debug')) {
      logSafely(logger, 'debug', `transition ${record.from} → ${record.to}: ${record.description}`, {
        seq: record.seq,
        durationMs: record.durationMs,
        data: record.data,
      });
    }
  }

  #drain(): void {
    this.#draining = true;
    try {
      const queue = this.#queue!;
      for (let item = queue.shift(); item !== undefined; item = queue.shift()) {
        if ('reset' in item) this.#applyReset(item.reset);
        else if ('rejected' in item) this.#reportRejection(item.rejected);
        else this.#commit(item);
      }
    } finally {
      this.#draining = false;
    }
  }

  #applyReset(info: ResetInfo<S>): void {
    this.#resetAt = info.at;
    this.#history.clear();
    this.#notifying = true;
    try {
      if (this.#sink?.reset !== undefined) {
        try {
          this.#watchSink(this.#sink.reset(info) as unknown);
        } catch (error) {
          this.#reportSinkError(error);
        }
      }
      const logger = this.#logger;
      if (logger !== undefined)
        logSafely(logger, 'info', `reset from ${info.from} to ${this.#validator.table.initial}`, { seq: info.seq });
      this.#emitter.emit('reset', info);
    } finally {
      this.#notifying = false;
    }
    if (this.#queue !== undefined && this.#queue.length > 0 && !this.#draining) this.#drain();
  }

  #reject(from: S, to: S, description: string): never {
    this.#validator.assertKnown(to, 'transition() target');
    const error = new IllegalTransitionError<S>(
      from,
      to,
      this.#validator.table.states[from].next,
      description,
      this.#now(),
    );
    // Inside a listener, the move this rejection is checked against may still be queued: the
    // report waits its turn, so the history shows it after that move. The throw is immediate.
    if (this.#notifying) (this.#queue ??= []).push({ rejected: error });
    else this.#reportRejection(error);
    throw error;
  }

  #reportRejection(error: IllegalTransitionError<S>): void {
    const { from, to, description } = error;
    // Moves asked for by the sink or `rejected` listeners wait until the report is done.
    const outer = this.#notifying;
    this.#notifying = true;
    try {
      const logger = this.#logger;
      if (logger !== undefined && this.#levelEnabled(logger, 'warn'))
        logSafely(logger, 'warn', `rejected transition ${from} → ${to}: ${description}`, { allowed: error.allowed });
      if (this.#sink?.rejected !== undefined) {
        try {
          this.#watchSink(this.#sink.rejected(error) as unknown);
        } catch (sinkError) {
          this.#reportSinkError(sinkError);
        }
      }
      this.#emitter.emit('rejected', error);
    } finally {
      this.#notifying = outer;
    }
    if (!outer && this.#queue !== undefined && this.#queue.length > 0 && !this.#draining) this.#drain();
  }

  // Level checks cost one string comparison per move: winston's own check walks the
  // transports, so its answers are cached until the logger's level changes.
  #levelEnabled(logger: Logger, level: 'debug' | 'info' | 'warn'): boolean {
    // A level check that throws (a broken custom logger) must not break a move half-way:
    // the move has already been recorded, so it is reported and the logger is taken as silent.
    try {
      if (logger.level !== this.#loggerLevel) {
        this.#loggerLevel = logger.level;
        this.#debug = logger.isLevelEnabled('debug');
        this.#warn = logger.isLevelEnabled('warn');
        this.#info = logger.isLevelEnabled('info');
        if (!this.#debug && levelIsFixed(logger)) this.#watched = undefined;
      }
    } catch (error) {
      this.#loggerLevel = NEVER;
      process.emitWarning(`agent-state-machine: the logger's level check threw: ${messageOf(error)}`);
      return false;
    }
    if (level === 'info') return this.#info;
    return level === 'debug' ? this.#debug : this.#warn;
  }

  #listenerThrew(event: string, error: unknown): void {
    if (this.#logger !== undefined)
      logSafely(this.#logger, 'error', `a '${event}' listener threw: ${messageOf(error)}`, { stack: stackOf(error) });
    if (event !== 'listenerError') this.#emitter.emit('listenerError', { event, error });
  }

  /** A sink may be async (`sink: (r) => save(r)`): its rejection is a sink error, never an unhandled rejection. */
  #watchSink(returned: unknown, record?: TransitionRecord<S>): void {
    if (isThenable(returned)) returned.then(undefined, (error: unknown) => this.#reportSinkError(error, record));
  }

  #reportSinkError(error: unknown, record?: TransitionRecord<S>): void {
    if (this.#logger !== undefined)
      logSafely(this.#logger, 'error', `history sink failed: ${messageOf(error)}`, { seq: record?.seq });
    this.#emitter.emit('sinkError', record === undefined ? { error } : { record, error });
  }
}

// The logger's level, or a value no level equals when reading it throws (a broken custom
// logger): then #levelEnabled runs, which reports the failure.
const UNREADABLE = Symbol('unreadable level');
// A value no level equals: the next move checks the logger.
const NEVER = Symbol('check the logger');
function levelOf(logger: Logger): unknown {
  try {
    return logger.level;
  } catch {
    return UNREADABLE;
  }
}
