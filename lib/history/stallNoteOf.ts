import { dataField } from '../internal/dataField';
import type { TransitionRecord } from '../machine/TransitionRecord';

/** A stall a run's record tells of: a detector fired after a response (`stall` in a move's data). */
export interface StallNote {
  readonly turn: number;
  readonly seq: number;
  readonly at: number;
  /** The state the move went to (Stalled, in the adapter's table). */
  readonly state: string;
  readonly detector: string;
  readonly reason: string;
  /** The repeated call (`tool`, `input`, `count`), the repeated `text`, or a custom detector's own. */
  readonly evidence: unknown;
  /** What the adapter did about it (`nudge`, `stop`), when the record says. */
  readonly policy?: string;
}

/**
 * The stall `record` tells of, if any: its data's `stall` ({ detector, reason, evidence }) with
 * the policy applied. Read from the data, not the state's name, so any table's records are read
 * alike. Pure.
 */
export function stallNoteOf(record: TransitionRecord<string>, turn: number): StallNote | undefined {
  const stall = dataField(record.data, 'stall');
  const detector = dataField(stall, 'detector');
  if (typeof detector !== 'string') return undefined;
  const reason = dataField(stall, 'reason');
  const policy = dataField(record.data, 'policy');
  const note = {
    turn,
    seq: record.seq,
    at: record.at,
    state: record.to,
    detector,
    reason: typeof reason === 'string' ? reason : '',
    evidence: dataField(stall, 'evidence'),
  };
  return typeof policy === 'string' ? { ...note, policy } : note;
}
