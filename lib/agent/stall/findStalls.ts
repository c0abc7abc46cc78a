import { InvalidArgumentError } from '../../machine/InvalidArgumentError';
import type { JournalEntry } from '../journal/JournalEntry';
import type { StallDetector, StallFinding } from './stallDetectors';

/** Where a detector fires in a journal: after which entry, in which turn, at which LLM response. */
export interface StallSighting {
  /** The index in the journal of the LLM line whose response fired it. */
  index: number;
  turn: number;
  /** 1 for the journal's first LLM response, counting responses only (not failed attempts). */
  response: number;
  finding: StallFinding;
}

/**
 * Every place in a run's journal where one of `detectors` fires, as the adapter asks them: after
 * each response that asks for tools, on the journal up to it, the first finding counting. Every
 * firing is listed, whatever a policy would have done about it. Pure.
 */
export function findStalls(journal: readonly JournalEntry[], detectors: readonly StallDetector[]): StallSighting[] {
  if (!Array.isArray(journal)) throw new InvalidArgumentError('journal', 'an array of journal entries', journal);
  if (!Array.isArray(detectors) || !detectors.every((d) => typeof d === 'function'))
    throw new InvalidArgumentError('detectors', 'an array of functions (journal) => finding or undefined', detectors);
  const out: StallSighting[] = [];
  let responses = 0;
  for (const [index, entry] of journal.entries()) {
    if (
      entry.type !== 'llm' ||
      entry.error !== undefined ||
      typeof entry.response !== 'object' ||
      entry.response === null
    )
      continue;
    responses += 1;
    const calls = entry.response.toolCalls;
    if (!Array.isArray(calls) || calls.length === 0) continue;
    const prefix = journal.slice(0, index + 1);
    for (const detector of detectors) {
      const finding = detector(prefix);
      if (finding === undefined) continue;
      out.push({ index, turn: entry.turn, response: responses, finding });
      break;
    }
  }
  return out;
}
