import * as fs from 'node:fs';
import * as path from 'node:path';
import type { TurnOutcome } from '../../agent/TurnOutcome';
import { USAGE_FIELD_NAMES } from '../../internal/fieldLists';
import type { UncertainReasons } from '../../internal/formatSpend';
import { TURN_OUTCOMES } from '../../internal/turnOutcomes';
import { emptyUsage, type UsageTotals } from '../../agent/UsageTotals';

/** The cache's name in a batch's history folder. It does not end in `.jsonl`: readers of the folder never take it for a run. */
export const ENDED_RUNS_FILE = 'ended-runs.cache';

/** What a resume needs of a run whose file ended: `resumeState`'s `finished` state, less its path. */
export interface EndedRun {
  outcome: TurnOutcome;
  usage: UsageTotals;
  transitions: number;
  reason: string | undefined;
  durationMs: number;
  /** Why its money is uncertain, and why calls are of unknown cost: when it has such calls. */
  uncertain?: UncertainReasons;
  unpriced?: UncertainReasons;
}

interface Entry extends EndedRun {
  /** The run file's name in the folder, and its size and mtime when the facts were read from it. */
  file: string;
  size: number;
  mtimeMs: number;
}

/**
 * A cache of what the ended run files of a batch folder say, so that resuming a folder of
 * thousands of ended runs reads one small file and stats each run file instead of parsing
 * every one (1,000 runs: 8 MB of JSON). The run files stay the truth: an entry counts only
 * while its file has the size and mtime it had when the entry was written from it; any other
 * file is read whole, and a line of the cache that cannot be read (a torn last line after a
 * crash) is just not a hit. Entries are appended when a run's file ends, and by a resume that
 * had to read a file whole.
 */
export class EndedRunCache {
  readonly #file: string;
  readonly #entries = new Map<string, Entry>();
  /** Entries added and not yet appended to the file, as its lines (each ending in a newline). */
  #unwritten: string[] = [];

  private constructor(dir: string) {
    this.#file = path.join(dir, ENDED_RUNS_FILE);
  }

  /** The folder's cache as it is on disk (empty when there is none). */
  static read(dir: string): EndedRunCache {
    const cache = new EndedRunCache(dir);
    let text: string;
    try {
      text = fs.readFileSync(cache.#file, 'utf8');
    } catch {
      return cache; // none yet: every file is read whole
    }
    for (const line of text.split('\n')) {
      const entry = parseEntry(line);
      // The last entry for a file is the newest: a resumed run's file replaces the cut-off one's.
      if (entry !== undefined) cache.#entries.set(entry.file, entry);
    }
    return cache;
  }

  /** Starts the folder's cache afresh: a new batch in the folder, whose files are not the old ones. */
  static clear(dir: string): void {
    fs.rmSync(path.join(dir, ENDED_RUNS_FILE), { force: true });
  }

  /** What `file` (a path in the folder) says, when its entry is still true of it; undefined otherwise. */
  lookup(file: string): EndedRun | undefined {
    const entry = this.#entries.get(path.basename(file));
    if (entry === undefined) return undefined;
    let stat: fs.Stats;
    try {
      stat = fs.statSync(file);
    } catch {
      return undefined;
    }
    if (stat.size !== entry.size || stat.mtimeMs !== entry.mtimeMs) return undefined;
    return endedRunOf(entry);
  }

  /**
   * Adds what `file` says as read at `stat` (its stat taken before the read, so a file that
   * grew during the read never matches). Entries are appended to the folder's cache
   * FLUSH_EVERY at a time and at `flush()`: a crash loses only the newest, and costs only
   * speed (the next resume reads those files whole), as does a cache that cannot be written.
   */
  add(file: string, stat: fs.Stats, run: EndedRun): void {
    const entry: Entry = { file: path.basename(file), size: stat.size, mtimeMs: stat.mtimeMs, ...run };
    this.#entries.set(entry.file, entry);
    // The reasons always written, none as []: an entry without them was written before they were kept.
    const line = {
      ...entry,
      reason: entry.reason ?? null,
      uncertain: entry.uncertain ?? [],
      unpriced: entry.unpriced ?? [],
    };
    this.#unwritten.push(`${JSON.stringify(line)}\n`);
    if (this.#unwritten.length >= FLUSH_EVERY) this.flush();
  }

  /** Appends the entries added since the last flush to the folder's cache. */
  flush(): void {
    if (this.#unwritten.length === 0) return;
    const text = this.#unwritten.join('');
    this.#unwritten = [];
    try {
      fs.appendFileSync(this.#file, text);
    } catch {
      // a read-only folder, a full disk: the cache is an optimisation, the run files are the record
    }
  }
}

/** What a resume needs of `run` (a cache entry, or a `finished` state), copied: no other field, and no reasons when it has none. */
export function endedRunOf(run: EndedRun): EndedRun {
  const { outcome, usage, transitions, reason, durationMs, uncertain, unpriced } = run;
  return {
    outcome,
    usage: { ...usage },
    transitions,
    reason,
    durationMs,
    ...(uncertain === undefined ? {} : { uncertain }),
    ...(unpriced === undefined ? {} : { unpriced }),
  };
}

/** Entries appended to the cache file at a time: one write for many runs' ends, few lost to a crash. */
const FLUSH_EVERY = 64;

const OUTCOMES: ReadonlySet<string> = new Set<string>(TURN_OUTCOMES);

function parseEntry(line: string): Entry | undefined {
  if (line === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Record<string, unknown>;
  const { file, size, mtimeMs, outcome, transitions, reason, durationMs } = v;
  if (typeof file !== 'string' || typeof outcome !== 'string' || !OUTCOMES.has(outcome)) return undefined;
  if (!isCount(size) || typeof mtimeMs !== 'number' || !isCount(transitions) || typeof durationMs !== 'number')
    return undefined;
  if (reason !== null && typeof reason !== 'string') return undefined;
  const usage = usageOf(v['usage']);
  if (usage === undefined) return undefined;
  // An entry without reasons is from before the money was kept apart (its uncertain and released
  // USD read as 0 there): a miss, its file read for them.
  const uncertain = reasonsOf(v['uncertain']);
  const unpriced = reasonsOf(v['unpriced']);
  if (uncertain === false || unpriced === false) return undefined;
  return {
    file,
    size,
    mtimeMs,
    outcome: outcome as TurnOutcome,
    usage,
    transitions,
    reason: reason ?? undefined,
    durationMs,
    ...(uncertain === undefined ? {} : { uncertain }),
    ...(unpriced === undefined ? {} : { unpriced }),
  };
}

/** An entry's reasons (undefined for none); false when they are missing or cannot be read. */
function reasonsOf(value: unknown): UncertainReasons | undefined | false {
  if (!Array.isArray(value)) return false;
  for (const r of value as unknown[])
    if (typeof (r as { why?: unknown })?.why !== 'string' || !isCount((r as { calls?: unknown }).calls)) return false;
  return value.length === 0 ? undefined : (value as UncertainReasons);
}

function usageOf(value: unknown): UsageTotals | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const usage = emptyUsage();
  for (const key of USAGE_FIELD_NAMES) {
    const n = (value as Record<string, unknown>)[key];
    if (typeof n !== 'number' || !Number.isFinite(n)) return undefined;
    usage[key] = n;
  }
  return usage;
}

function isCount(n: unknown): n is number {
  return typeof n === 'number' && Number.isInteger(n) && n >= 0;
}
