import { answeredBy, type ApprovalDecision, type PendingApproval } from '../../agent/ApprovalGate';
import type { TurnResult } from '../../agent/TurnResult';
import { InvalidArgumentError } from '../../machine/InvalidArgumentError';
import { messageOf } from '../../internal/messageOf';
import { FrameworkTurn } from '../tasks/FrameworkTurn';
import type { ParkableRun } from '../tasks/ParkableRun';

export type { ParkableRun } from '../tasks/ParkableRun';

/** What `runBatch`'s `onApproval` gets for a run that parked: its calls, and how to answer them. */
export interface BatchApprovalRequest {
  /** The task's id and index. */
  id: string;
  index: number;
  /** The tool calls waiting for an answer, in call order. */
  calls: PendingApproval[];
  /**
   * Approves a call; with `{ input }` it runs with that input instead of the LLM's. `by` (who
   * approved) is kept in a framework run's `approval` journal line.
   */
  approve: (callId: string, options?: { input?: unknown; by?: string }) => void;
  /** Denies a call: it does not run, and the LLM gets `denied: <reason>` as its result. `by`: as `approve`'s. */
  deny: (callId: string, reason?: string, options?: { by?: string }) => void;
}

/** How long a run of a batch waited, parked, for approval answers. */
export interface ApprovalWait {
  /** Times the run parked (once per LLM response with calls that wait). */
  waits: number;
  /** Tool calls it asked approval for. */
  calls: number;
  /** Time spent parked, by the batch's clock, until its answers reached it or its turn ended. */
  waitedMs: number;
}

/** How often and how long a run of a batch waited, parked, at a pausing shared cap for a raise. */
export interface CapWait {
  /** Times the run parked at the cap. */
  pauses: number;
  /** Time spent parked, by the batch's clock, until a raise and a slot reached it or its turn ended. */
  waitedMs: number;
}

/** A parked run's change, for the batch's progress: `atCap` when it waits for a raise, not for answers. */
export interface ParkChange {
  type: 'parked' | 'unparked';
  index: number;
  calls: number;
  atCap: boolean;
}

/**
 * The slot a run holds while it runs. With parking, the worker that gave it waits on
 * `released()` until the run lets go: it parks, or it ends.
 */
export class Slot {
  #in = true;
  #release: (() => void) | undefined;

  /** Whether the run is in its slot (not parked). */
  get held(): boolean {
    return this.#in;
  }

  /** Resolves when the run lets go of the slot. */
  released(): Promise<void> {
    return new Promise<void>((resolve) => (this.#release = resolve));
  }

  /** A parked run takes a slot again. */
  take(): void {
    this.#in = true;
  }

  free(): void {
    this.#in = false;
    const release = this.#release;
    this.#release = undefined;
    release?.();
  }
}

interface Parked {
  index: number;
  agent: ParkableRun;
  slot: Slot;
  calls: PendingApproval[];
  answers: Map<string, ApprovalDecision>;
  /** The answers given to its agent already (all but the last, which waits for a slot). */
  given: Set<string>;
  /** Parked at a pausing cap (not for answers): the cap's raises when it refused the run. */
  atCap: number | undefined;
  /** A worker gave it a slot: it is no longer waiting for one. */
  seatTaken: boolean;
  /** Resolved when a worker hands the run its slot again. */
  seat: () => void;
  seated: Promise<void>;
}

/**
 * Runs of a batch that wait for approval or for a raise of a pausing shared cap, parked out of
 * their slots. A parked run's slot goes to the next task; `onApproval` gets its calls, and once
 * every one is answered (or, at the cap, once it was raised: `raised()`) the run waits for a
 * free slot (before any new task starts), gets the answers (or tries its call again) and goes
 * on. A run whose turn ends while parked (its `approvalTimeoutMs`, the batch's abort) ends
 * there, without a slot.
 */
export class ParkedRuns {
  readonly #parked = new Set<Parked>();
  /** Parked runs with every call answered, in the order they were answered: next to get a slot. */
  readonly #ready: Parked[] = [];
  #wake: Array<() => void> = [];
  readonly #waits = new Map<number, ApprovalWait>();
  readonly #capWaits = new Map<number, CapWait>();
  readonly #clock: () => number;
  readonly #onApproval: ((request: BatchApprovalRequest) => unknown) | undefined;
  readonly #onProblem: (message: string) => void;
  readonly #onChange: (change: ParkChange) => void;
  /** Told when the run at an index took its answers (or ended without them): they are used up. */
  readonly #onTaken: ((index: number) => void) | undefined;
  /** Whether runs can park at all (an approval policy, a pausing cap); if not, a worker simply awaits each run. */
  readonly #canPark: boolean;
  /** The pausing cap's raises so far (0 without one). */
  readonly #raises: () => number;
  /** Whether tasks not started wait for a raise: workers then stay, even with no run parked. */
  readonly #holding: () => boolean;

  constructor(options: {
    canPark: boolean;
    clock: () => number;
    onApproval?: (request: BatchApprovalRequest) => unknown;
    onProblem: (message: string) => void;
    onChange: (change: ParkChange) => void;
    onTaken?: (index: number) => void;
    raises?: () => number;
    holding?: () => boolean;
  }) {
    this.#canPark = options.canPark;
    this.#clock = options.clock;
    this.#onApproval = options.onApproval;
    this.#onProblem = options.onProblem;
    this.#onChange = options.onChange;
    this.#onTaken = options.onTaken;
    this.#raises = options.raises ?? (() => 0);
    this.#holding = options.holding ?? (() => false);
  }

  /** How long the run at `index` waited at the cap, if it ever did; asked once, when the run has ended. */
  takeCapWait(index: number): CapWait | undefined {
    const wait = this.#capWaits.get(index);
    this.#capWaits.delete(index);
    return wait;
  }

  /** The pausing cap was raised: every run parked at it is next for a slot. */
  raised(): void {
    for (const run of this.#parked) if (run.atCap !== undefined) this.#makeReady(run);
    this.#notify();
  }

  /** Wakes waiting workers to look again (the batch was aborted, or a raise let tasks start). */
  wake(): void {
    this.#notify();
  }

  /** How long the run at `index` waited, if it ever parked; asked once, when the run has ended. */
  takeWait(index: number): ApprovalWait | undefined {
    const wait = this.#waits.get(index);
    this.#waits.delete(index);
    return wait;
  }

  /**
   * The run at `index` stopped with `awaiting_approval`: it lets go of its slot and
   * waits for its answers and a slot, or for its turn to end on its own. Resolves with the
   * turn's next stop. A run whose calls were answered already (through its agent) keeps its slot.
   */
  async park(id: string, index: number, slot: Slot, agent: ParkableRun, paused?: TurnResult): Promise<TurnResult> {
    if (paused?.outcome === 'awaiting_budget') return this.#parkAtCap(id, index, agent, slot, paused);
    const next = agent.continueTurn();
    if (!agent.awaitingApproval) return next;
    const calls = agent.pendingApprovals;
    const wait = this.#waits.get(index) ?? { waits: 0, calls: 0, waitedMs: 0 };
    wait.waits += 1;
    wait.calls += calls.length;
    this.#waits.set(index, wait);
    const parkedAt = this.#clock();
    let seat!: () => void;
    const seated = new Promise<void>((resolve) => (seat = resolve));
    const run: Parked = {
      index,
      agent,
      slot,
      calls,
      answers: new Map(),
      given: new Set(),
      atCap: undefined,
      seatTaken: false,
      seat,
      seated,
    };
    this.#parked.add(run);
    slot.free();
    this.#onChange({ type: 'parked', index, calls: calls.length, atCap: false });
    this.#ask(id, run);
    const how = await Promise.race([next.then(() => 'ended' as const), seated.then(() => 'seated' as const)]);
    this.#leave(run);
    wait.waitedMs += Math.max(0, this.#clock() - parkedAt) || 0;
    if (how === 'ended') {
      this.#onTaken?.(index);
      return next;
    }
    for (const decision of run.answers.values()) {
      if (run.given.has(decision.callId)) continue;
      try {
        giveAnswer(agent, decision);
      } catch (error) {
        // The turn ended between the last answer and its slot (timeout, abort): `next` says how.
        this.#onProblem(`run ${id} did not take the answer to ${decision.callId}: ${messageOf(error)}`);
      }
    }
    this.#onTaken?.(index);
    return next;
  }

  /**
   * The run at `index` stopped with `awaiting_budget`: it lets go of its slot and waits for a
   * raise after the one it was refused under (at once if one came meanwhile) and a slot, then
   * tries its call again (`retryBudget`); or its turn ends (the batch's abort). Resolves with the
   * turn's next stop.
   */
  async #parkAtCap(id: string, index: number, agent: ParkableRun, slot: Slot, paused: TurnResult): Promise<TurnResult> {
    const next = agent.continueTurn();
    if (!agent.awaitingBudget) return next;
    const wait = this.#capWaits.get(index) ?? { pauses: 0, waitedMs: 0 };
    wait.pauses += 1;
    this.#capWaits.set(index, wait);
    const parkedAt = this.#clock();
    let seat!: () => void;
    const seated = new Promise<void>((resolve) => (seat = resolve));
    const raises = paused.awaitingBudget?.raises ?? 0;
    const run: Parked = {
      index,
      agent,
      slot,
      calls: [],
      answers: new Map(),
      given: new Set(),
      atCap: raises,
      seatTaken: false,
      seat,
      seated,
    };
    this.#parked.add(run);
    slot.free();
    this.#onChange({ type: 'parked', index, calls: 0, atCap: true });
    // A raise that came since the refusal (or while `onChange` ran) lets it go on.
    if (this.#raises() > raises) this.#makeReady(run);
    const how = await Promise.race([next.then(() => 'ended' as const), seated.then(() => 'seated' as const)]);
    this.#leave(run);
    wait.waitedMs += Math.max(0, this.#clock() - parkedAt) || 0;
    if (how === 'ended') return next;
    try {
      agent.retryBudget();
    } catch (error) {
      // The turn ended between the raise and its slot (an abort): `next` says how.
      this.#onProblem(`run ${id} did not try its call again after the raise: ${messageOf(error)}`);
    }
    return next;
  }

  /**
   * Runs tasks in `count` slots until every one has ended, parked ones included. A free slot
   * goes to the first parked run whose answers are in, else to the next task `take()` gives
   * (`run(index, slot)` holds the slot until the run parks or ends); with neither, it waits
   * for a parked run's answers, or ends once none is parked. A run that throws outside its
   * turn frees its slot and rejects the batch.
   */
  async runSlots(
    count: number,
    take: () => number | undefined,
    run: (index: number, slot: Slot) => Promise<void>,
  ): Promise<void> {
    const started: Array<Promise<void>> = [];
    const worker = async (): Promise<void> => {
      for (;;) {
        const resumed = this.#resumeNext();
        if (resumed !== undefined) {
          await resumed;
          continue;
        }
        const index = take();
        if (index !== undefined && !this.#canPark) {
          await run(index, new Slot());
          continue;
        }
        if (index !== undefined) {
          const slot = new Slot();
          const held = slot.released();
          const whole = run(index, slot).finally(() => slot.free());
          started.push(whole);
          await Promise.race([held, whole]);
          continue;
        }
        if (!(await this.#waitForWork())) return;
      }
    };
    await Promise.all(Array.from({ length: count }, worker));
    // Runs that ended while parked finish without a slot: the batch ends once they have.
    await Promise.all(started);
  }

  /** A worker with a free slot takes the first answered run: it goes on in that slot. Resolves when it lets go. */
  #resumeNext(): Promise<void> | undefined {
    const run = this.#ready.shift();
    if (run === undefined) return undefined;
    run.seatTaken = true;
    run.slot.take();
    const held = run.slot.released();
    // In its slot from now: if its turn ends before the answers reach it, it ends in this slot.
    this.#onChange({ type: 'unparked', index: run.index, calls: run.calls.length, atCap: run.atCap !== undefined });
    run.seat();
    return held;
  }

  /** Next for a slot, once: not when a worker gave it one already, nor twice. */
  #makeReady(run: Parked): void {
    if (run.seatTaken || this.#ready.includes(run)) return;
    this.#ready.push(run);
    this.#notify();
  }

  /**
   * Resolves when a parked run is answered or raised, or something else may have changed (true),
   * or none is parked any more and no task waits for a raise (false).
   */
  #waitForWork(): Promise<boolean> {
    if (this.#ready.length > 0) return Promise.resolve(true);
    if (this.#parked.size === 0 && !this.#holding()) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => this.#wake.push(() => resolve(true)));
  }

  #ask(id: string, run: Parked): void {
    const answer = (decision: ApprovalDecision): void => {
      const { callId } = decision;
      if (!run.calls.some((c) => c.callId === callId))
        throw new InvalidArgumentError(
          'callId',
          `the id of a call run ${id} waits on (${run.calls.map((c) => c.callId).join(', ')})`,
          callId,
        );
      if (run.answers.has(callId))
        throw new InvalidArgumentError('callId', 'a call not answered yet (it was answered already)', callId);
      if (!this.#parked.has(run))
        throw new InvalidArgumentError(
          'callId',
          `a call of a run still waiting (run ${id} has gone on or ended)`,
          callId,
        );
      if (run.answers.size + 1 < run.calls.length) {
        // Not the last: the run takes it now (a framework's run journals it), as it holds no slot until the last.
        giveAnswer(run.agent, decision);
        run.given.add(callId);
      }
      run.answers.set(callId, decision);
      if (run.answers.size === run.calls.length) {
        this.#ready.push(run);
        this.#notify();
      }
    };
    const request: BatchApprovalRequest = {
      id,
      index: run.index,
      calls: run.calls.map((c) => ({ ...c })),
      approve: (callId, options = {}) => {
        if (typeof options !== 'object' || options === null)
          throw new InvalidArgumentError('options', 'an object { input?, by? }', options);
        if ('input' in options && run.agent instanceof FrameworkTurn)
          throw new InvalidArgumentError(
            'options.input',
            `left out for run ${id}: its framework runs an approved call with the input its model gave`,
            options.input,
          );
        answer({
          callId,
          approved: true,
          ...('input' in options ? { input: options.input } : {}),
          ...answeredBy(options),
        });
      },
      deny: (callId, reason = 'denied by a person', options = {}) => {
        if (typeof reason !== 'string') throw new InvalidArgumentError('reason', 'a string', reason);
        if (typeof options !== 'object' || options === null)
          throw new InvalidArgumentError('options', 'an object { by? }', options);
        answer({ callId, approved: false, reason, ...answeredBy(options) });
      },
    };
    if (this.#onApproval === undefined) return;
    try {
      const returned = this.#onApproval(request);
      // An async callback's rejection would otherwise surface as an unhandled rejection.
      if (returned instanceof Promise)
        returned.catch((error: unknown) => this.#onProblem(`onApproval failed for run ${id}: ${messageOf(error)}`));
    } catch (error) {
      this.#onProblem(`onApproval threw for run ${id}: ${messageOf(error)}; the run stays parked`);
    }
  }

  #leave(run: Parked): void {
    this.#parked.delete(run);
    const at = this.#ready.indexOf(run);
    if (at >= 0) this.#ready.splice(at, 1);
    this.#notify();
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = [];
    for (const w of wake) w();
  }
}

/**
 * Gives `decision` to its run: who answered (`by`) reaches a framework run, whose mirror
 * journals it; an adapter run journals no answer, and takes the input given instead.
 */
function giveAnswer(agent: ParkableRun, decision: ApprovalDecision): void {
  const { callId } = decision;
  if (agent instanceof FrameworkTurn) {
    const by = decision.by === undefined ? {} : { by: decision.by };
    if (decision.approved) agent.approve(callId, by);
    else agent.deny(callId, decision.reason, by);
    return;
  }
  if (decision.approved) agent.approve(callId, 'input' in decision ? { input: decision.input } : {});
  else agent.deny(callId, decision.reason);
}
