import type { AgentWithStateMachine, CapWait, TurnResult } from 'agent-state-machine';
import { messageOf } from '../../internal/messageOf';
import type { RaiseWatch } from './RaiseWatch';
import type { WorkerSlots } from './WorkerSlots';

/** How one run of a worker parks at its batch's paused cap. */
export interface RunParking {
  /** `runTask`'s `awaitPause`: parks the run out of its slot until a raise and a free slot, then it tries its call again. */
  awaitPause: (agent: AgentWithStateMachine, paused: TurnResult) => Promise<TurnResult>;
  /** Resolves the first time the run parks: its processor then lets its job go (it holds no BullMQ slot either). */
  parked: Promise<void>;
  /** Whether the run is in a slot now (it took one when it started). */
  readonly inSlot: boolean;
  /** How often and how long it waited at the cap, once it has ended. */
  capWait(): CapWait | undefined;
}

/**
 * The parking of one run started in a slot of `slots`: when its turn stops with
 * `awaiting_budget` (the batch's cap pauses and its next call did not fit), it lets go of the
 * slot and waits for a raise of its batch's cap (`watch`) after the one it was refused under,
 * then for a slot (before any new run), then tries the call again. A turn that ends meanwhile
 * (the batch's abort, the worker's close) ends there, without a slot. `onSlot` is told each
 * time the run takes or lets go of a slot after its first park.
 */
export function parkAtCap(options: {
  slots: WorkerSlots;
  watch: RaiseWatch;
  budgetKey: string;
  signal: AbortSignal;
  onSlot: (taken: boolean) => void;
  onProblem: (message: string) => void;
  /** Told each time the run parks (true) and takes a slot again after a raise (false): the batch's progress counts it so. */
  onPark?: (parked: boolean) => void;
}): RunParking {
  const { slots, watch, budgetKey, signal, onSlot, onProblem, onPark } = options;
  let inSlot = true;
  let wait: CapWait | undefined;
  let firstPark!: () => void;
  const parked = new Promise<void>((resolve) => (firstPark = resolve));

  const awaitPause = async (agent: AgentWithStateMachine, paused: TurnResult): Promise<TurnResult> => {
    const next = agent.continueTurn();
    // The worker asks no approvals (refused by name), so only a paused cap lands here.
    if (!agent.awaitingBudget) return next;
    wait ??= { pauses: 0, waitedMs: 0 };
    wait.pauses += 1;
    const parkedAt = Date.now();
    inSlot = false;
    slots.free();
    if (wait.pauses > 1) onSlot(false);
    onPark?.(true);
    firstPark();
    const raised = watch.wait(budgetKey, paused.awaitingBudget?.raises ?? 0, signal);
    const how = await Promise.race([next.then(() => 'ended' as const), raised.then((r) => (r ? 'raised' : 'ended'))]);
    if (how === 'raised') {
      await slots.takeFirst();
      inSlot = true;
      onSlot(true);
      onPark?.(false);
    }
    wait.waitedMs += Math.max(0, Date.now() - parkedAt);
    if (how === 'ended') return next;
    try {
      agent.retryBudget();
    } catch (error) {
      // The turn ended between the raise and its slot (an abort): `next` says how.
      onProblem(`a run parked at its batch's cap did not try its call again after the raise: ${messageOf(error)}`);
    }
    return next;
  };

  return {
    awaitPause,
    parked,
    get inSlot() {
      return inSlot;
    },
    capWait: () => (wait === undefined ? undefined : { ...wait }),
  };
}
