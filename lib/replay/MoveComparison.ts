import { FifoQueue } from '../internal/FifoQueue';

/** What a move is compared by. */
interface ComparedMove {
  from: string;
  to: string;
  forced: boolean;
}

/** Where the recorded and the replayed moves part: the index (0-based), and each side's move there, when it has one. */
export interface MoveDifference<M extends ComparedMove> {
  index: number;
  recorded?: M;
  replayed?: M;
}

/**
 * Compares the recorded moves with the replayed ones as either side comes in, in any
 * interleaving: a pair is compared as soon as both sides have it and then let go, so only the
 * moves one side is ahead by are held. Once they part, the rest is only counted.
 */
export class MoveComparison<M extends ComparedMove> {
  /** Moves in the file, and moves the replay made. */
  recordedMoves = 0;
  replayedMoves = 0;
  /** The replay's last move. */
  lastReplayed: M | undefined;
  readonly #recorded = new FifoQueue<M>();
  readonly #replayed = new FifoQueue<M>();
  #same = 0;
  #difference: MoveDifference<M> | undefined;

  addRecorded(move: M): void {
    this.recordedMoves += 1;
    if (this.#difference !== undefined) return;
    this.#recorded.push(move);
    this.#compare();
  }

  addReplayed(move: M): void {
    this.replayedMoves += 1;
    this.lastReplayed = move;
    if (this.#difference !== undefined) return;
    this.#replayed.push(move);
    this.#compare();
  }

  /** With both sides in: where they first part, or undefined when they are the same moves in the same order. */
  difference(): MoveDifference<M> | undefined {
    if (this.#difference !== undefined) return this.#difference;
    const recorded = this.#recorded.peek();
    const replayed = this.#replayed.peek();
    if (recorded === undefined && replayed === undefined) return undefined;
    const difference: MoveDifference<M> = { index: this.#same };
    if (recorded !== undefined) difference.recorded = recorded;
    if (replayed !== undefined) difference.replayed = replayed;
    return difference;
  }

  #compare(): void {
    while (this.#recorded.length > 0 && this.#replayed.length > 0) {
      const recorded = this.#recorded.shift()!;
      const replayed = this.#replayed.shift()!;
      if (same(recorded, replayed)) {
        this.#same += 1;
        continue;
      }
      this.#difference = { index: this.#same, recorded, replayed };
      this.#recorded.clear();
      this.#replayed.clear();
    }
  }
}

/** The same move: the same states and forcing. Descriptions may carry times and are not compared. */
function same(a: ComparedMove, b: ComparedMove): boolean {
  return a.from === b.from && a.to === b.to && a.forced === b.forced;
}
