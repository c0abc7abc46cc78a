import { BudgetExceededError, OperationError, type MirrorStop, type StepMirror } from 'agent-state-machine';
import type { RunToolApprovalItem } from '@openai/agents';
import { safeStringify } from '../../internal/safeStringify';
import type { AgentsApprovals } from './AgentsApprovals';

// How the SDK's run ending ends the mirror's run: by an error (or the mirror's own refusal, or an
// abort), or with the run's final output (or parked for tool approvals).

/**
 * The SDK's run ended with `error`: unless the mirror stopped it itself (`refused`: why it refused
 * a call, when it did), `mirror` ends its run by it. Nothing when the mirror's run has ended.
 */
export function sdkRunFailed(
  mirror: StepMirror,
  refused: MirrorStop | undefined,
  error: unknown,
  controller: AbortController,
): void {
  if (!mirror.running) return;
  // A tool the mirror refused left the run in the tool phase: it ends there, by the limit that refused it.
  if (refused instanceof BudgetExceededError) mirror.runEnd();
  else if (refused instanceof OperationError) mirror.runFailed(refused);
  else if (controller.signal.aborted) mirror.runAborted(controller.signal.reason ?? error);
  else mirror.runFailed(error);
}

/**
 * The SDK's run ended: stopped on `interruptions` (tools that need approval), else done with
 * `finalOutput`. Stopped, the run parks in AwaitingApproval when the mirror has approval states
 * (`approvals`), and ends as cancelled when it has none.
 */
export function sdkRunFinished(
  mirror: StepMirror,
  approvals: AgentsApprovals,
  result: { interruptions?: readonly RunToolApprovalItem[]; finalOutput?: unknown; state?: unknown },
): void {
  if (!mirror.running) return;
  const { interruptions } = result;
  if (interruptions !== undefined && interruptions.length > 0) {
    if (approvals.enabled) {
      const refused = approvals.park(interruptions, result.state);
      if (refused !== undefined) mirror.runFailed(refused);
      return;
    }
    const names = interruptions.map((i) => i.name ?? 'a tool').join(', ');
    mirror.runAborted(
      `paused for approval of ${names}: the mirror has no approval states (make it with approvals: true to park the run and continue it with am.answered())`,
    );
    return;
  }
  // Read only now: the SDK warns of a finalOutput read from a run that stopped on interruptions.
  const { finalOutput } = result;
  mirror.runEnd(
    finalOutput === undefined
      ? {}
      : { text: typeof finalOutput === 'string' ? finalOutput : safeStringify(finalOutput) },
  );
}
