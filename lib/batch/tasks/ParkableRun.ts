import type { AgentWithStateMachine } from '../../agent/AgentWithStateMachine';

/**
 * A run the batch can park: an adapter run (`AgentWithStateMachine`) or a framework run
 * (`FrameworkTurn`): its next stop, whether it waits and on what, and how to answer it.
 */
export type ParkableRun = Pick<
  AgentWithStateMachine,
  'continueTurn' | 'awaitingApproval' | 'pendingApprovals' | 'approve' | 'deny' | 'awaitingBudget' | 'retryBudget'
>;
