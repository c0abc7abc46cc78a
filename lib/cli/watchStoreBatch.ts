import type { RunStore, StoredBatch } from '../batch/keeping/RunStore';
import { HistoryFileError } from '../history/HistoryFileError';
import { pauseInForce } from '../batch/keeping/capPause';
import { keepsRaises } from '../batch/raises/RaiseBox';
import { byTaskOrder } from './byTaskOrder';
import { WatchBoard, type FollowedRun, type WatchIO, type WatchOptions, type WatchSource } from './WatchBoard';

/** How often a store is looked at by default: a query per run not ended at each look. */
export const STORE_POLL_MS = 1000;

/**
 * `agent-sm watch --store URL <batchId>`: the board of `agent-sm watch <folder>` for a batch a
 * store keeps, fed by polling it every `pollMs` (default 1 s): the batch's runs
 * (`RunStore.readBatch`) and each run's lines since the last look (`StoredLines.read(afterLine)`).
 * Ends as the folder's watch does: when every task of the manifest is reported — its turn ended,
 * or the batch is over (no writer holds it), so it was skipped or cut off — unless `stay`; or
 * when `signal` aborts. Rejects, before drawing anything, when the store holds no such batch.
 * Resolves to the exit code: 2 when a run's lines could not be read, else 0.
 */
export async function watchStoreBatch(
  store: RunStore,
  batchId: string,
  options: WatchOptions,
  io: WatchIO,
): Promise<number> {
  const source = await StoreWatchSource.open(store, batchId);
  return new WatchBoard({ ...options, pollMs: options.pollMs ?? STORE_POLL_MS }, io).show(source);
}

/** A stored run followed: the run it feeds, how many of its lines were pushed, and which attempt. */
interface FollowedLines {
  readonly run: FollowedRun;
  lines: number;
  /** How many attempts a resume had set aside: one more means a new attempt, read from its start. */
  readonly setAside: number;
}

/**
 * A store's batch as a board's source. A run's lines are committed in order, so the count of
 * lines read is where the next look starts. A run that has ended its turn is looked at only in
 * a full pass (less often the more runs there are, as a folder's full scan), and in every pass
 * once the batch is over: a batch of 10,000 runs costs a query per run in flight at each look.
 */
export class StoreWatchSource implements WatchSource {
  readonly label: string;
  readonly raiseArgs: readonly string[];
  readonly #store: RunStore;
  readonly #batchId: string;
  readonly #runs = new Map<string, FollowedLines>();
  /** The batch as read before the first look, used by it instead of reading it again. */
  #next: StoredBatch | undefined;
  #looks = 0;

  /** The source of batch `batchId` of `store`; rejects, naming it, when the store holds no such batch. */
  static async open(store: RunStore, batchId: string): Promise<StoreWatchSource> {
    const source = new StoreWatchSource(store, batchId);
    source.#next = await store.readBatch(batchId);
    if (source.#next === undefined) throw new HistoryFileError('not_found', source.label, 'no such batch in the store');
    return source;
  }

  private constructor(store: RunStore, batchId: string) {
    this.#store = store;
    this.#batchId = batchId;
    this.label = `${store.name} batch ${batchId}`;
    this.raiseArgs = ['--store', store.name, batchId];
  }

  async scan(board: WatchBoard): Promise<void> {
    const batch = this.#next ?? (await this.#store.readBatch(this.#batchId));
    this.#next = undefined;
    if (batch === undefined) throw new HistoryFileError('not_found', this.label, 'the batch is no longer in the store');
    if (board.manifest === undefined) {
      board.manifest = batch.manifest;
      board.state.tasks = batch.manifest.tasks.map((t) => t.id);
    }
    // Read before the lines: a batch no writer holds wrote them all before, so once they are
    // read, what they say is final.
    const over = !batch.running;
    const full = over || this.#looks % Math.max(1, Math.ceil(batch.runs.length / 500)) === 0;
    this.#looks++;
    for (const { runId, run, setAside } of byTaskOrder(batch.runs, (r) => r.runId, board.state.tasks)) {
      let seen = this.#runs.get(runId);
      if (seen !== undefined && seen.setAside !== setAside.length) {
        board.warn(`${run.name}: a resume set its attempt aside; its run is read again`);
        board.forget(seen.run);
        seen = undefined;
      }
      if (seen === undefined) {
        seen = { run: board.follow(runId, run.name), lines: 0, setAside: setAside.length };
        this.#runs.set(runId, seen);
        // The attempts a resume set aside, oldest first, for the run's spend over all of them.
        board.earlier(
          runId,
          setAside.map((a) => ({ name: a.name, input: () => a.read() })),
        );
      }
      if (seen.run.failed || (!full && board.state.runs.get(runId)?.outcome !== undefined)) continue;
      for await (const piece of run.read(seen.lines)) {
        seen.lines += newlines(piece);
        seen.run.pieces.push(Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength));
      }
    }
    const raises = keepsRaises(this.#store) ? await this.#store.readRaises(this.#batchId) : [];
    for (const raise of raises.slice(board.raises.length)) board.raise(raise);
    await board.settle();
    board.state.over = over;
    // Believed only while a writer holds the batch, as inspect reads it (`storeBatchSource`).
    if (keepsRaises(this.#store))
      board.pause(over ? undefined : pauseInForce(await this.#store.readPause(this.#batchId), raises));
  }
}

/** How many lines `piece` ends (a store's pieces are whole lines). */
function newlines(piece: Uint8Array): number {
  let count = 0;
  for (let at = piece.indexOf(10); at !== -1; at = piece.indexOf(10, at + 1)) count++;
  return count;
}
