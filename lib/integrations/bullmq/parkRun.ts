import type { ApprovalDecision, ApprovalWait, CapWait, TurnResult } from 'agent-state-machine';
import type { FrameworkTurn, ParkableRun } from 'agent-state-machine/internal';
import { messageOf } from '../../internal/messageOf';
import type { ParkWatch } from './ParkWatch';
import type { WorkerSlots } from './WorkerSlots';

/** How one run of a worker parks out of its slot: at its batch's paused cap, or for approval. */
export interface RunParking {
  /** `runTask`'s `awaitPause`: parks the run out of its slot until it is let go and a slot is free, then it goes on. */
  awaitPause: (agent: ParkableRun, paused: TurnResult) => Promise<TurnResult>;
  /** `runTask`'s `awaitFrameworkPause`: parks a framework run (`drive`) that stopped for its framework's approvals, as `awaitPause` does. */
  awaitFrameworkPause: (run: FrameworkTurn, paused: TurnResult) => Promise<TurnResult>;
  /** Resolves the first time the run parks: its processor then lets its job go (it holds no BullMQ slot either). */
  parked: Promise<void>;
  /** Whether the run is in a slot now (it took one when it started). */
  readonly inSlot: boolean;
  /** How often and how long it waited at the cap, once it has ended. */
  capWait(): CapWait | undefined;
  /** How often, for how many calls and how long it waited for approval, once it has ended. */
  approvalWait(): ApprovalWait | undefined;
}

/** The Redis side of a run's approvals: its request made, its answers waited for, its request closed. */
export interface RunApprovals {
  /** Opens request number `park` of the run for `calls` (before the run lets go of its slot). */
  ask(park: number, calls: ParkableRun['pendingApprovals']): Promise<void>;
  /** Resolves with the answers once every call has one; undefined when `signal` aborts first. */
  answers(park: number, callIds: readonly string[], signal: AbortSignal): Promise<ApprovalDecision[] | undefined>;
  /** Closes the request: the run went on with its answers (`taken`), or ended. */
  close(park: number, callIds: readonly string[], taken?: readonly ApprovalDecision[]): Promise<void>;
}

/**
 * The parking of one run started in a slot of `slots`. When its turn stops with
 * `awaiting_budget` (the batch's cap pauses and its next call did not fit), it lets go of the
 * slot and waits for a raise of its batch's cap (`watch`) after the one it was refused under,
 * then tries the call again. When it stops with `awaiting_approval` (its worker's `approve`, or
 * a framework run's own: AI SDK `needsApproval`, LangGraph `interrupt()`), it opens its request in Redis (`approvals`; a request that cannot be made ends the run, as
 * `end` cancels it), lets go of the slot and waits for every answer, then hands them to its
 * agent. Either way it waits for a slot (before any new run) before it goes on; a turn that ends
 * meanwhile (its approval timeout, the batch's abort, the worker's close) ends there, without a
 * slot. `onSlot` is told each time the run takes or lets go of a slot after its first park.
 */
export function parkRun(options: {
  slots: WorkerSlots;
  watch: ParkWatch;
  budgetKey: string;
  /** The batch's raise count, read from Redis: Infinity once it stopped on another limit (or is gone), so that its parked runs go on to meet the stop and end. */
  readRaises: () => Promise<number>;
  approvals?: RunApprovals | undefined;
  signal: AbortSignal;
  end: (reason: string) => void;
  onSlot: (taken: boolean) => void;
  onProblem: (message: string) => void;
  /** Told each time the run parks at the cap (true) and takes a slot again after a park (false): the batch's progress counts it so. */
  onPark?: (parked: boolean) => void;
}): RunParking {
  const { slots, watch, budgetKey, readRaises, approvals, signal, end, onSlot, onProblem, onPark } = options;
  let inSlot = true;
  let capWait: CapWait | undefined;
  let approvalWait: ApprovalWait | undefined;
  let firstPark!: () => void;
  const parked = new Promise<void>((resolve) => (firstPark = resolve));

  /**
   * Lets go of the slot until `release` (waiting until its signal aborts) gives a value, then
   * takes one again; undefined when the turn (`next`) ended first, and then the wait stops (else
   * the worker would read for it until it closes). Its caller counted the park (a cap pause, an
   * approval wait).
   */
  const park = async <T>(
    next: Promise<TurnResult>,
    release: (signal: AbortSignal) => Promise<T | undefined>,
  ): Promise<T | undefined> => {
    inSlot = false;
    slots.free();
    if ((capWait?.pauses ?? 0) + (approvalWait?.waits ?? 0) > 1) onSlot(false);
    firstPark();
    const waiting = new AbortController();
    const stop = (): void => waiting.abort();
    signal.addEventListener('abort', stop, { once: true });
    if (signal.aborted) stop();
    const how = await Promise.race([
      next.then(() => undefined),
      release(waiting.signal).then((value) => (value === undefined ? undefined : { value })),
    ]);
    signal.removeEventListener('abort', stop);
    stop();
    if (how === undefined) return undefined;
    await slots.takeFirst();
    inSlot = true;
    onSlot(true);
    onPark?.(false);
    return how.value;
  };

  const atCap = async (agent: ParkableRun, paused: TurnResult): Promise<TurnResult> => {
    const next = agent.continueTurn();
    if (!agent.awaitingBudget) return next;
    capWait ??= { pauses: 0, waitedMs: 0 };
    capWait.pauses += 1;
    const parkedAt = Date.now();
    onPark?.(true);
    const after = paused.awaitingBudget?.raises ?? 0;
    const went = await park(next, (stopped) =>
      watch.wait(budgetKey, readRaises, (raises) => raises > after, stopped, "at its batch's cap"),
    );
    capWait.waitedMs += Math.max(0, Date.now() - parkedAt);
    if (went === undefined) return next;
    try {
      agent.retryBudget();
    } catch (error) {
      // The turn ended between the raise and its slot (an abort): `next` says how.
      onProblem(`a run parked at its batch's cap did not try its call again after the raise: ${messageOf(error)}`);
    }
    return next;
  };

  const forApproval = async (
    agent: ParkableRun,
    give: (agent: ParkableRun, decision: ApprovalDecision) => void,
  ): Promise<TurnResult> => {
    const next = agent.continueTurn();
    // Answered already (through its agent): it keeps its slot.
    if (!agent.awaitingApproval || approvals === undefined) return next;
    const calls = agent.pendingApprovals;
    const ids = calls.map((c) => c.callId);
    const number = (approvalWait?.waits ?? 0) + 1;
    try {
      await approvals.ask(number, calls);
    } catch (error) {
      // Nobody could answer it: the run ends in its slot, its calls not run.
      end(`its approval request did not reach Redis: ${messageOf(error)}`);
      return next;
    }
    approvalWait ??= { waits: 0, calls: 0, waitedMs: 0 };
    approvalWait.waits += 1;
    approvalWait.calls += calls.length;
    const parkedAt = Date.now();
    const answers = await park(next, (stopped) => approvals.answers(number, ids, stopped));
    approvalWait.waitedMs += Math.max(0, Date.now() - parkedAt);
    // Closed either way: an answer that comes late is refused, not left for nobody (and told how
    // the call was answered, when the run went on with its answers).
    await approvals
      .close(number, ids, answers)
      .catch((error: unknown) => onProblem(`its approval request was not closed: ${messageOf(error)}`));
    if (answers === undefined) return next;
    for (const decision of answers) {
      try {
        give(agent, decision);
      } catch (error) {
        // The turn ended between the last answer and its slot (its timeout, an abort): `next` says how.
        onProblem(`the answer to ${decision.callId} did not reach the run: ${messageOf(error)}`);
      }
    }
    return next;
  };

  return {
    awaitPause: (agent, paused) =>
      paused.outcome === 'awaiting_budget' ? atCap(agent, paused) : forApproval(agent, toAgent),
    // A framework run never waits at a cap (its batch's pausing cap is refused).
    awaitFrameworkPause: (run) => forApproval(run, (_, decision) => toFramework(run, decision)),
    parked,
    get inSlot() {
      return inSlot;
    },
    capWait: () => (capWait === undefined ? undefined : { ...capWait }),
    approvalWait: () => (approvalWait === undefined ? undefined : { ...approvalWait }),
  };
}

/** An answer to an adapter run: an approval may change the call's input. */
function toAgent(agent: ParkableRun, decision: ApprovalDecision): void {
  if (decision.approved) agent.approve(decision.callId, 'input' in decision ? { input: decision.input } : {});
  else agent.deny(decision.callId, decision.reason);
}

/**
 * An answer to a framework run, with who gave it (its journal keeps it). An input given with an
 * approval is left out, as runBatch leaves it: the framework runs the call with its model's input.
 */
function toFramework(run: FrameworkTurn, decision: ApprovalDecision): void {
  const by = decision.by === undefined ? {} : { by: decision.by };
  if (decision.approved) run.approve(decision.callId, by);
  else run.deny(decision.callId, decision.reason, by);
}
