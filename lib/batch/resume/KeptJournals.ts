import * as fs from 'node:fs';
import type { RecordedLine } from '../../agent/journal/RunRecording';

/**
 * The journals of a folder's cut-off runs, read in the same pass as their state when a resume
 * reads their files, kept until each run continues: else each file is read twice, once for
 * what the run spent and once for what it is served (a run cut off after 50 calls: 220 KB,
 * parsed twice). The files stay the truth: a journal is taken only while its file has the size
 * and mtime it had before it was read. Past `KEPT_BYTES` of such files in all, a journal is not
 * kept, and its run reads it when it starts, as before: a batch of many long cut-off runs must
 * not hold all their journals at once.
 */
export class KeptJournals {
  #room = KEPT_BYTES;
  readonly #kept = new Map<string, { size: number; mtimeMs: number; lines: RecordedLine[] }>();

  /** Whether the journal of a file of `size` bytes may be kept. */
  fits(size: number): boolean {
    return size <= this.#room;
  }

  /** Keeps `lines`, the journal of `file` as read at `stat` (taken before the read, so a file that grew during it never matches). */
  keep(file: string, stat: fs.Stats, lines: RecordedLine[]): void {
    this.#room -= stat.size;
    this.#kept.set(file, { size: stat.size, mtimeMs: stat.mtimeMs, lines });
  }

  /** The journal kept for `file`, given up (a run continues once), when the file is still as it was read; else undefined. */
  take(file: string): RecordedLine[] | undefined {
    const kept = this.#kept.get(file);
    if (kept === undefined) return undefined;
    this.#kept.delete(file);
    this.#room += kept.size;
    let stat: fs.Stats;
    try {
      stat = fs.statSync(file);
    } catch {
      return undefined;
    }
    return stat.size === kept.size && stat.mtimeMs === kept.mtimeMs ? kept.lines : undefined;
  }
}

/** Bytes of run files whose journals may be kept at once. */
const KEPT_BYTES = 32 * 1024 * 1024;
