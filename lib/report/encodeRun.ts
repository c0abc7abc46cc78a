import type { CollectedRun, StateKind } from './collectRun';
import { safeStringify } from '../internal/safeStringify';
import { cut } from '../internal/text';

/** Interns strings: each distinct one is written once, moves refer to it by index. */
export class StringTable {
  readonly strings: string[] = [];
  readonly #index = new Map<string, number>();

  id(text: string): number {
    let i = this.#index.get(text);
    if (i === undefined) {
      i = this.strings.length;
      this.strings.push(text);
      this.#index.set(text, i);
    }
    return i;
  }
}

/** A run as the page's script reads it (see clientScript's `decode`): times in ms from the run's start. */
export interface EncodedRun {
  /** The run's start, epoch ms. */
  readonly t0: number;
  /** [seq, from, to, at, durationMs, description, data (−1: none), flags (1 forced, 2 retried)]. */
  readonly m: number[][];
  /** Rejected moves: [seq before it, from, to, at, description, allowed]. */
  readonly r: number[][];
  /** What was said before a move, from the journal: [seq, text]. Only a run's own page has it. */
  readonly c?: number[][];
}

/**
 * A run's moves in the compact form the page embeds: names, descriptions and data interned
 * (a batch's ten thousand `running bash` are one string), each move's data as JSON cut to
 * `maxDataChars`.
 */
export function encodeRun(facts: CollectedRun, strings: StringTable, maxDataChars: number): EncodedRun {
  const t0 = facts.summary.startedAt ?? facts.rejected[0]?.at ?? 0;
  const m = facts.records.map((r) => [
    r.seq,
    strings.id(r.from),
    strings.id(r.to),
    r.at - t0,
    r.durationMs,
    strings.id(r.description),
    r.data === undefined ? -1 : strings.id(cut(safeStringify(r.data), maxDataChars)),
    (r.forced ? 1 : 0) | (facts.retried.has(r.seq) ? 2 : 0),
  ]);
  const r = facts.rejected.map((x) => [
    x.seq,
    strings.id(x.from),
    strings.id(x.to),
    x.at - t0,
    strings.id(x.description),
    strings.id(x.allowed.join(', ')),
  ]);
  return { t0, m, r };
}

/** States in table order with their kind, for the script's lanes and colours. */
export function stateOrder(
  order: readonly string[],
  kinds: Readonly<Record<string, StateKind>>,
): Array<[string, StateKind]> {
  return order.map((s) => [s, kinds[s] ?? 'other']);
}
