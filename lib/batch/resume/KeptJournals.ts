import * as fs from 'node:fs';
import type { RecordedLine } from '../../agent/journal/RunRecording';

/**
 * The journals of a batch's cut-off runs, read in the same pass as their state when a resume
 * reads their lines (a folder's files, a store's), kept until each run continues: else each
 * run is read twice, once for what it spent and once for what it is served (a run cut off after
 * 50 calls: 220 KB, parsed twice). The lines stay the truth: a journal is taken only while they
 * are still as they were read (`stillAsRead`). Past `KEPT_BYTES` of such lines in all, a
 * journal is not kept, and its run reads it when it starts, as before: a batch of many long
 * cut-off runs must not hold all their journals at once.
 */
export class KeptJournals {
  #room: number;
  readonly #kept = new Map<string, { bytes: number; lines: RecordedLine[]; stillAsRead: () => boolean }>();

  /** `room`: the bytes of run lines whose journals may be kept at once. */
  constructor(room = KEPT_BYTES) {
    this.#room = room;
  }

  /** Whether the journal of lines of `bytes` bytes may be kept. */
  fits(bytes: number): boolean {
    return bytes <= this.#room;
  }

  /** Keeps `lines`, the journal of run `name` (a file, a store batch's run id) read from `bytes` bytes, while `stillAsRead()` says they are unchanged. */
  keep(name: string, bytes: number, lines: RecordedLine[], stillAsRead: () => boolean): void {
    this.#room -= bytes;
    this.#kept.set(name, { bytes, lines, stillAsRead });
  }

  /** The journal kept for `name`, given up (a run continues once), when its lines are still as read; else undefined. */
  take(name: string): RecordedLine[] | undefined {
    const kept = this.#kept.get(name);
    if (kept === undefined) return undefined;
    this.#kept.delete(name);
    this.#room += kept.bytes;
    return kept.stillAsRead() ? kept.lines : undefined;
  }
}

/** Whether `file` still has the size and mtime of `stat` (taken before it was read, so a file that grew during the read never matches). */
export function unchangedSince(file: string, stat: fs.Stats): () => boolean {
  return () => {
    let now: fs.Stats;
    try {
      now = fs.statSync(file);
    } catch {
      return false;
    }
    return now.size === stat.size && now.mtimeMs === stat.mtimeMs;
  };
}

/** Bytes of run lines whose journals may be kept at once. */
const KEPT_BYTES = 32 * 1024 * 1024;
