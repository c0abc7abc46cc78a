import type { PendingApproval } from '../../agent/ApprovalGate';
import type { StepMirror } from '../../agent/StepMirror';
import type { TurnResult } from '../../agent/TurnResult';
import type { ParkableRun } from './ParkableRun';

/**
 * A framework task's run as the batch parks it, as it parks an adapter run: its stops (the run
 * waits for approval answers, or it ended) one after the other (`start`, then `continueTurn`),
 * what it waits on, and the answers, which go to the mirror's approval wait; the framework then
 * continues the same run. A framework run never waits at a cap (`awaitingBudget` is false).
 */
export class FrameworkTurn implements ParkableRun {
  readonly #mirror: StepMirror;
  #stop: ((result: TurnResult) => void) | undefined;
  #ended: TurnResult | undefined;
  /** A stop that came while nobody waited for one. */
  #early: TurnResult | undefined;

  constructor(mirror: StepMirror) {
    this.#mirror = mirror;
    mirror.approvals.listen((paused) => this.#stopped(paused));
  }

  /** Starts the framework's run (`whole` settles with its end): resolves at its first stop. */
  start(whole: Promise<TurnResult>): Promise<TurnResult> {
    const first = this.continueTurn();
    void whole.then((result) => {
      this.#ended = result;
      this.#stopped(result);
    });
    return first;
  }

  /** Resolves at the run's next stop: it waits for answers again, or it ended. */
  continueTurn(): Promise<TurnResult> {
    const early = this.#early ?? this.#ended;
    this.#early = undefined;
    if (early !== undefined) return Promise.resolve(early);
    return new Promise<TurnResult>((resolve) => (this.#stop = resolve));
  }

  get awaitingApproval(): boolean {
    return this.#mirror.approvals.waiting;
  }

  get pendingApprovals(): PendingApproval[] {
    return this.#mirror.approvals.pending;
  }

  approve(callId: string, options: { input?: unknown; by?: string } = {}): void {
    this.#mirror.approvals.approve(callId, options);
  }

  deny(callId: string, reason?: string, options: { by?: string } = {}): void {
    this.#mirror.approvals.deny(callId, reason, options);
  }

  get awaitingBudget(): boolean {
    return false;
  }

  retryBudget(): void {
    throw new Error('a framework run never waits at a cap: there is no call to try again');
  }

  #stopped(result: TurnResult): void {
    const stop = this.#stop;
    this.#stop = undefined;
    if (stop === undefined) this.#early = result;
    else stop(result);
  }
}
