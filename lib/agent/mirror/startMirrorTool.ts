import { State } from '../../../states/StateName';
import type { ToolCall } from '../AgentLoop';
import type { MirrorMoves } from './MirrorMoves';
import type { MirrorStop } from './MirrorStop';
import { abortReason } from '../turn/abortReason';
import { FORCED } from '../turn/TurnCore';
import { mirrorCancelError, mirrorEndedError } from './mirrorStopReason';
import { budgetError } from '../money/spentRecord';
import { OperationError } from '../TurnError';

const ONE_TOOL_CALL = Object.freeze({ toolCalls: 1 });

/**
 * Before a mirrored tool call runs (`StepMirror.toolStart`, its call checked): undefined to run
 * it, or why it must not — the run cancelled before its tools ran, the signal aborted, a budget
 * spent. A refused call is answered and journaled.
 */
export async function startMirrorTool(
  run: MirrorMoves,
  call: ToolCall,
  signal: AbortSignal,
  clock: () => number,
): Promise<MirrorStop | undefined> {
  const meter = run.meter!;
  const state = run.machine.pendingState;
  let slot = run.slots.find((s) => s.call.id === call.id);
  if (state === State.CheckingForCancellation) {
    if (signal.aborted) return run.stop(run.cancelBeforeTools(run.slots.map((s) => s.call.id)));
    run.enterRunningTool();
  } else if (state !== State.RunningTool) {
    // A tool nobody asked for in this run's order (run on a user's approval, or before its response was reported).
    if (slot === undefined) run.slots = [];
    run.move(
      State.RunningTool,
      {
        description: `running ${call.name}: the framework ran a tool outside a response's tool calls`,
        logLevel: 'info',
      },
      FORCED,
    );
  }
  if (slot === undefined) {
    slot = { call, status: 'pending', startedAt: 0, endedAt: 0 };
    run.slots.push(slot);
    run.unsent = true;
  }
  if (signal.aborted)
    return run.refuse(
      slot,
      'interrupted',
      `interrupted: ${abortReason(signal)}`,
      mirrorCancelError(signal, run.machine.pendingState),
    );
  const spent = meter.spent() ?? (meter.hasExternal ? await meter.reserve('tool') : undefined);
  if (spent instanceof OperationError) return run.refuse(slot, 'not_run', `not run: ${spent.message}`, spent);
  if (spent !== undefined) return run.refuse(slot, 'not_run', `not run: ${spent.message}`, budgetError(spent));
  if (!run.running) return mirrorEndedError(run.result, run.turn, run.machine.current);
  meter.charge(ONE_TOOL_CALL, false);
  slot.status = 'running';
  slot.startedAt = meter.hasExternal ? clock() : meter.lastReading;
  return undefined;
}
