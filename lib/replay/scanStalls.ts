import { findStalls, type StallSighting } from '../agent/stall/findStalls';
import type { JournalEntry } from '../agent/journal/JournalEntry';
import type { JournalLineRead } from '../history/HistoryEntry';
import { InvalidArgumentError } from '../machine/InvalidArgumentError';
import type { StallSpec } from './parseStallSpecs';

/** Where stall detectors would have fired on a recorded run. */
export interface StallScan {
  /** The detectors asked, as `parseStallSpecs` named them. */
  detectors: string[];
  /** LLM responses in the journal (with their content: a ledger-only line has none). */
  responses: number;
  /** Each firing, with the seq of the move the response's line follows (the move into ProcessingLLMResponse comes after it). */
  sightings: Array<StallSighting & { afterSeq: number }>;
}

/**
 * Asks `specs`' detectors about a recorded run's journal as the adapter would have asked them
 * (`findStalls`): where would the run have moved to Stalled? Needs a file written with
 * `journal: true`; throws when its journal holds no response to judge. Pure.
 */
export function scanStalls(journal: readonly JournalLineRead[], specs: readonly StallSpec[]): StallScan {
  if (!Array.isArray(journal))
    throw new InvalidArgumentError(
      'journal',
      'the journal lines of a history file (loadHistory(file).journal)',
      journal,
    );
  const entries = journal as unknown as readonly JournalEntry[];
  let responses = 0;
  for (const e of entries) if (e.type === 'llm' && typeof e.response === 'object' && e.response !== null) responses++;
  if (responses === 0)
    throw new InvalidArgumentError(
      'file',
      'a history file written with journal: true (its journal holds no LLM response to judge)',
      `${journal.length} journal lines`,
    );
  const sightings = findStalls(
    entries,
    specs.map((s) => s.detector),
  ).map((s) => ({ ...s, afterSeq: journal[s.index]!.seq }));
  return { detectors: specs.map((s) => s.name), responses, sightings };
}
