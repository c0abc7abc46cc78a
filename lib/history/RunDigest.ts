import { createHash, type Hash } from 'node:crypto';
import type { HistoryEntry } from './HistoryEntry';
import { stepKey, stepOf } from './diffStep';

/**
 * A digest of what a run did, built a line at a time: every step (`stepOf`) as `diffRunFiles`
 * compares it, the ignored fields (timestamps, durations, run ids) left out. Two runs with the
 * same digest take the same steps; two that differ diverge somewhere, which `diffRunFiles` finds.
 */
export class RunDigest {
  readonly #hash: Hash = createHash('sha256');
  #steps = 0;

  add(entry: HistoryEntry): void {
    const step = stepOf(entry);
    if (step === undefined) return;
    this.#steps++;
    this.#hash.update(stepKey(step)).update('\n');
  }

  /** The digest (hex); call once. */
  digest(): string {
    return `${this.#steps}:${this.#hash.digest('hex')}`;
  }
}
