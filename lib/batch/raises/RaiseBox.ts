import type { RunStore } from '../keeping/RunStore';
import { clearCapPause, readPauseFile, writeCapPause, type CapPause } from '../keeping/capPause';
import { appendRaiseRequest, readRaiseRequests, type RaiseRequest, type RaisesRead } from '../keeping/raiseRequests';

/**
 * Where a batch paused at its cap finds the raises people ask of it (`agent-sm raise`,
 * `requestRaise`) and says it is paused, for readers in other processes: its history folder's
 * files, or its store. Both outlive the batch's process, so a resume starts from the raises
 * asked before.
 */
export interface RaiseBox {
  /** The batch, in messages: its folder, or `<store> batch <id>`. */
  readonly where: string;
  /** The raise requests after the first `from`, in the order asked. */
  read(from: number): Promise<RaisesRead>;
  append(request: RaiseRequest): Promise<void>;
  /** Says the batch is paused (`pause`), or no longer (undefined). */
  notePause(pause: CapPause | undefined): Promise<void>;
  /** The pause last noted, raises since or not. */
  readPause(): Promise<CapPause | undefined>;
}

/** The raise file and pause file of history folder `dir` (`batch.raises`, `batch.paused`). */
export function folderRaiseBox(dir: string): RaiseBox {
  return {
    where: dir,
    read: async (from) => readRaiseRequests(dir, from),
    append: async (request) => appendRaiseRequest(dir, request),
    notePause: async (pause) => (pause === undefined ? clearCapPause(dir) : writeCapPause(dir, pause)),
    readPause: async () => readPauseFile(dir),
  };
}

/** The store that keeps the raises of a store's batch: one with `keepRaise`, `readRaises`, `keepPause` and `readPause`. */
export type RaiseStore = RunStore & Required<Pick<RunStore, 'keepRaise' | 'readRaises' | 'keepPause' | 'readPause'>>;

/** Whether `store` keeps raises and pauses (its optional raise methods are there). */
export function keepsRaises(store: RunStore): store is RaiseStore {
  return (
    typeof store.keepRaise === 'function' &&
    typeof store.readRaises === 'function' &&
    typeof store.keepPause === 'function' &&
    typeof store.readPause === 'function'
  );
}

/** The raises and pause `store` keeps for its batch `batchId`. */
export function storeRaiseBox(store: RaiseStore, batchId: string): RaiseBox {
  return {
    where: `${store.name} batch ${batchId}`,
    read: async (from) => {
      const all = await store.readRaises(batchId);
      const requests = all.slice(from).map((r, i) => ({ maxCostUsd: r.maxCostUsd, at: r.at, line: from + i + 1 }));
      return { requests, problems: [], lines: Math.max(from, all.length) };
    },
    append: (request) => store.keepRaise(batchId, request),
    notePause: (pause) => store.keepPause(batchId, pause),
    readPause: () => store.readPause(batchId),
  };
}
