import { stallNoteOf } from '../history/stallNoteOf';
import { safeStringify } from '../internal/safeStringify';
import type { TransitionRecord } from '../machine/TransitionRecord';
import type { OtlpSpan } from './OtlpJson';
import { attrs, nanos } from './otlpValues';

/** The span event a stall is exported as, and its attributes. */
export const STALL_EVENT = Object.freeze({
  name: 'agent_state_machine.stall',
  detector: 'agent_state_machine.stall.detector',
  reason: 'agent_state_machine.stall.reason',
  /** The evidence as JSON: the repeated call (`tool`, `input`, `count`), or the repeated `text`. */
  evidence: 'agent_state_machine.stall.evidence',
  policy: 'agent_state_machine.stall.policy',
} as const);

/** The turn span's event for a move whose data tells of a stall (the adapter's `stall`), else undefined. Pure. */
export function stallEvent(r: TransitionRecord<string>): OtlpSpan['events'][number] | undefined {
  const note = stallNoteOf(r, 0);
  if (note === undefined) return undefined;
  return {
    timeUnixNano: nanos(r.at),
    name: STALL_EVENT.name,
    attributes: attrs({
      [STALL_EVENT.detector]: note.detector,
      [STALL_EVENT.reason]: note.reason,
      [STALL_EVENT.evidence]: note.evidence === undefined ? undefined : safeStringify(note.evidence),
      [STALL_EVENT.policy]: note.policy,
    }),
  };
}
