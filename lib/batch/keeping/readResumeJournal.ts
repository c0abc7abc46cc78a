import type { RecordedLine } from '../../agent/journal/RunRecording';
import type { UsageTotals } from '../../agent/UsageTotals';
import { readHistoryInto } from '../../history/loadHistory';
import { attemptsBeside } from './attemptNames';

/** One attempt of a run, as a resume reads it: a file by its path, or a store's lines (`input`) named `name`. */
export interface RunAttempt {
  readonly name: string;
  readonly input?: AsyncIterable<Uint8Array>;
  /** Its journal, when it was read already (with the run's state): not read again. */
  readonly journal?: RecordedLine[];
}

/**
 * The journal a cut-off run continues from: its file's, unless an earlier attempt kept beside it
 * (`<file>.interrupted`, `.interrupted.2`, …) holds more LLM responses — the newest attempt was
 * cut again before it had journaled again what it served, so its file holds only a part. The
 * newest of those with the most responses; none when no file was written with a journal (or
 * none can be read). `read`: the file's journal, when it was read already; `kept`: the attempts
 * beside it, the newest first, when they were listed already.
 */
export async function readResumeJournal(
  file: string,
  salvage: boolean,
  read?: RecordedLine[],
  kept: readonly RunAttempt[] = keptAttempts(file),
): Promise<RecordedLine[]> {
  return bestJournal([read === undefined ? { name: file } : { name: file, journal: read }, ...kept], salvage);
}

/** The earlier attempts of a run kept beside its file (`<file>.interrupted`, `.interrupted.2`, …), the newest first. */
export function keptAttempts(file: string): RunAttempt[] {
  return attemptsBeside(file)
    .reverse()
    .map((name) => ({ name }));
}

/**
 * Of a run's attempts, the newest first, the journal of the first that holds the most LLM
 * responses: an attempt cut again before it journaled again what it was served holds only a
 * part of an older one's.
 */
export async function bestJournal(attempts: readonly RunAttempt[], salvage: boolean): Promise<RecordedLine[]> {
  let best: RecordedLine[] = [];
  let most = -1;
  for (const attempt of attempts) {
    const lines = await readJournal(attempt, salvage);
    if (responses(lines) > most) [best, most] = [lines, responses(lines)];
  }
  return best;
}

/**
 * What a cut-off run had spent, for the attempt that continues it from `journal`: `usage` as its
 * records tell it, with every response the journal holds counted as a call. A kill between a
 * response's journal line and its record leaves that call out of the records, yet the run is
 * served it: it counts, toward `perRun.maxLlmCalls` too.
 */
export function resumedUsage(usage: UsageTotals, journal: readonly RecordedLine[]): UsageTotals {
  return { ...usage, llmCalls: Math.max(usage.llmCalls, responses(journal)) };
}

function responses(lines: readonly RecordedLine[]): number {
  return lines.filter((l) => l.type === 'llm' && typeof l.response === 'object' && l.response !== null).length;
}

/** The journal lines of one attempt (none when it was written without a journal, or cannot be read). */
async function readJournal({ name, input, journal }: RunAttempt, salvage: boolean): Promise<RecordedLine[]> {
  if (journal !== undefined) return journal;
  const lines: RecordedLine[] = [];
  try {
    // Skipped lines were logged when the resume's state was read.
    await readHistoryInto(
      name,
      { salvage, onWarning: () => undefined, ...(input === undefined ? {} : { input }) },
      (entry) => {
        if (entry.kind === 'journal') lines.push(entry.journal);
      },
    );
  } catch {
    // The resume's state read it a moment ago; an attempt that fails now restarts its run.
    return [];
  }
  return lines;
}
