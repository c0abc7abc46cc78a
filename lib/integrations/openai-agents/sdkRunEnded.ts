import { BudgetExceededError, OperationError, type MirrorStop, type StepMirror } from 'agent-state-machine';
import { safeStringify } from '../../internal/safeStringify';

// How the SDK's run ending ends the mirror's run: by an error (or the mirror's own refusal, or an
// abort), or with the run's final output (or paused for tool approvals).

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

/** The SDK's run ended: paused for the approval of `interruptions`, else done with `finalOutput`. */
export function sdkRunFinished(
  mirror: StepMirror,
  interruptions: readonly { name?: string; rawItem?: unknown }[] | undefined,
  finalOutput: unknown,
): void {
  if (!mirror.running) return;
  if (interruptions !== undefined && interruptions.length > 0) {
    // Tool approvals pause the SDK's run: its RunState resumes once they are decided.
    const names = interruptions.map((i) => i.name ?? 'a tool').join(', ');
    mirror.runAborted(`paused for approval of ${names}`);
    return;
  }
  mirror.runEnd(
    finalOutput === undefined
      ? {}
      : { text: typeof finalOutput === 'string' ? finalOutput : safeStringify(finalOutput) },
  );
}
