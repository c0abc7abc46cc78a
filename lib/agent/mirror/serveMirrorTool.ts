import { State } from '../../../states/StateName';
import type { ToolCall } from '../AgentLoop';
import type { JournalEntry } from '../journal/JournalEntry';
import type { MirrorMoves } from './MirrorMoves';
import { answerSlot, slotLine } from './MirrorSlot';
import type { RunRecording } from '../journal/RunRecording';
import { chargeServed } from '../calls/serveRecorded';
import type { RecordedToolAnswer } from './mirrorTool';

const ONE_TOOL_CALL = Object.freeze({ toolCalls: 1 });

/**
 * With `resumeFrom`, before a tool call of a served response (`StepMirror.recordedTool`, the run
 * live and not cancelled): its recorded (or `interrupted`) result, by the recording's tool
 * policy, answered and journaled without running it; undefined: run it.
 */
export function serveMirrorTool(
  run: MirrorMoves,
  recording: RunRecording,
  call: ToolCall,
  at: { clock: () => number; journal: ((entry: JournalEntry) => void) | undefined; chargesServed: boolean },
): RecordedToolAnswer | undefined {
  const state = run.machine.pendingState;
  const slot = run.slots.find((s) => s.call.id === call.id && s.status === 'pending');
  if (slot === undefined || (state !== State.CheckingForCancellation && state !== State.RunningTool)) return;
  const plan = recording.toolPlan(slot.call);
  if (plan.kind === 'run') return undefined;
  if (state === State.CheckingForCancellation) run.enterRunningTool();
  slot.startedAt = slot.endedAt = at.clock();
  if (plan.kind === 'interrupted') answerSlot(slot, 'interrupted', plan.note);
  else {
    slot.status = plan.status;
    slot.result = plan.result;
    // Kept on its line too: a run resumed from this one is served the value again.
    if (plan.json) slot.json = true;
    chargeServed(at.chargesServed ? run.meter : undefined, recording, ONE_TOOL_CALL);
  }
  at.journal?.(slotLine(run.turn, slot, plan.kind === 'serve'));
  const isError = slot.result!.isError === true;
  return { output: slot.result!.output, isError, ...(slot.json === true && !isError ? { json: true } : {}) };
}
