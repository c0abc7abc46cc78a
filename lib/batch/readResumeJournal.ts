import * as fs from 'node:fs';
import type { RecordedLine } from '../agent/RunRecording';
import { readHistoryInto } from '../history/loadHistory';

/**
 * The journal a cut-off run continues from: its file's, unless an earlier attempt kept beside it
 * (`<file>.interrupted`, `.interrupted.2`, …) holds more LLM responses — the newest attempt was
 * cut again before it had journaled again what it served, so its file holds only a part. The
 * newest of those with the most responses; none when no file was written with a journal (or
 * none can be read).
 */
export async function readResumeJournal(file: string, salvage: boolean): Promise<RecordedLine[]> {
  const kept: string[] = [];
  for (let n = 1; ; n++) {
    const name = n === 1 ? `${file}.interrupted` : `${file}.interrupted.${n}`;
    if (!fs.existsSync(name)) break;
    kept.push(name);
  }
  let best = await readJournal(file, salvage);
  let most = responses(best);
  for (const name of kept.reverse()) {
    const lines = await readJournal(name, salvage);
    if (responses(lines) > most) [best, most] = [lines, responses(lines)];
  }
  return best;
}

function responses(lines: readonly RecordedLine[]): number {
  return lines.filter((l) => l.type === 'llm' && typeof l.response === 'object' && l.response !== null).length;
}

/** The journal lines of one file (none when it was written without a journal, or cannot be read). */
async function readJournal(file: string, salvage: boolean): Promise<RecordedLine[]> {
  const lines: RecordedLine[] = [];
  try {
    // Skipped lines were logged when resumeState read the file.
    await readHistoryInto(file, { salvage, onWarning: () => undefined }, (entry) => {
      if (entry.kind === 'journal') lines.push(entry.journal);
    });
  } catch {
    // resumeState read it a moment ago; a file that fails now restarts its run.
    return [];
  }
  return lines;
}
