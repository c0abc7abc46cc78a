import { ignore } from '../../internal/ignore';
import { linkSignals } from '../../internal/linkSignals';
/**
 * A streamed response cut at its output bound. A server that ignores a request's max tokens
 * would bill past the hold; a streaming loop counts the output as it arrives and aborts the
 * request once the count reaches the request's max output tokens, so what the server bills stays
 * within the hold. The attempt left the process, so it is charged at its whole hold; it is not
 * retried (the server would ignore the bound again) and the run ends in error with the fact.
 */

/** The fact of a stream cut at its bound: kept in the attempt's journal (or ledger) line and in the record that ends the run. */
export interface CutAtBound {
  /** The output tokens counted when the stream was cut: the estimate, or the server's running count when larger. */
  countedTokens: number;
  /** The request's max output tokens: its bound. */
  maxOutputTokens: number;
}

/** The error a streaming loop throws when it cut its request at the output bound (`watchOutputBound`). */
export class StreamCutError extends Error {
  override readonly name = 'StreamCutError';
  readonly code = 'cut_at_bound' as const;
  constructor(readonly cutAtBound: CutAtBound) {
    super(
      `the response stream was cut at its bound: ${cutAtBound.countedTokens} output tokens counted, its max ${cutAtBound.maxOutputTokens}; the server does not stop at max tokens`,
    );
  }
}

/** The fact a thrown value carries when it is a stream cut at its bound (by shape, so a second copy of the library is recognised too). */
export function cutAtBoundOf(error: unknown): CutAtBound | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const e = error as { code?: unknown; cutAtBound?: unknown };
  if (e.code !== 'cut_at_bound' || typeof e.cutAtBound !== 'object' || e.cutAtBound === null) return undefined;
  const { countedTokens, maxOutputTokens } = e.cutAtBound as Record<string, unknown>;
  return typeof countedTokens === 'number' && typeof maxOutputTokens === 'number'
    ? { countedTokens, maxOutputTokens }
    : undefined;
}

/** Counts a streamed response's output and cuts its request at the bound. */
export interface OutputBoundWatch {
  /** Pass as the request's abort signal: it fires when the caller's does, or when the stream is cut. */
  readonly signal: AbortSignal;
  /** Counts a delta of output (text, reasoning, tool-call arguments); throws `StreamCutError` once the count reaches the bound. */
  add(delta: string): void;
  /** Takes the server's running count of output tokens, when the stream reports one mid-way; throws once it passes the bound. */
  reported(outputTokens: number | null | undefined): void;
  /**
   * Once the request has ended: unhooks `signal` from the caller's. A signal linked to a
   * long-lived one (a mirror's, a process-wide never-aborted one) would otherwise stay, with
   * whatever the request hung on it, for as long as that one lives.
   */
  release(): void;
}

/**
 * Pure: an over-count of the tokens `text` encodes to. A token of English text is about four
 * characters, so a third of the ASCII characters counts more; every other UTF-16 code unit counts
 * as a token of its own (a CJK character is one or more tokens). Errs towards over-counting: a
 * request is cut early rather than late.
 */
export function estimateOutputTokens(text: string): number {
  const chars = { ascii: 0, other: 0 };
  tally(text, chars);
  return Math.ceil(chars.ascii / 3) + chars.other;
}

function tally(text: string, into: { ascii: number; other: number }): void {
  for (let i = 0; i < text.length; i++) {
    if (text.charCodeAt(i) < 128) into.ascii++;
    else into.other++;
  }
}

/**
 * Watches a streamed request whose max output tokens is `maxOutputTokens` (undefined: no bound,
 * nothing is cut). Give its `signal` to the request and each delta to `add`; once the count
 * reaches the bound, the request is aborted and `add` throws `StreamCutError` (let it propagate:
 * the attempt is charged at its hold).
 */
export function watchOutputBound(maxOutputTokens: number | undefined, signal: AbortSignal): OutputBoundWatch {
  if (maxOutputTokens === undefined) return { signal, add: ignore, reported: ignore, release: ignore };
  return new BoundWatch(maxOutputTokens, signal);
}

/** The watch of a bounded stream. A class: no closure is made per request. */
class BoundWatch implements OutputBoundWatch {
  readonly #max: number;
  readonly #outer: AbortSignal;
  readonly #own = new AbortController();
  readonly #chars = { ascii: 0, other: 0 };
  #serverCount = 0;
  /** Set when `signal` is first read (a caller that only counts, a mirror, links nothing): undoes the link. */
  #unlink: (() => void) | undefined;

  constructor(max: number, outer: AbortSignal) {
    this.#max = max;
    this.#outer = outer;
  }

  /** Aborts when the caller's signal does, or when the stream is cut. */
  get signal(): AbortSignal {
    this.#unlink ??= linkSignals(this.#own, [this.#outer]);
    return this.#own.signal;
  }

  add(delta: string): void {
    tally(delta, this.#chars);
    this.#check();
  }

  reported(outputTokens: number | null | undefined): void {
    if (typeof outputTokens === 'number' && outputTokens > this.#serverCount) this.#serverCount = outputTokens;
    this.#check();
  }

  release(): void {
    this.#unlink?.();
  }

  #check(): void {
    const estimate = Math.ceil(this.#chars.ascii / 3) + this.#chars.other;
    // The estimate may over-count, so it cuts once it reaches the bound; the server's own count, only past it.
    if (estimate < this.#max && this.#serverCount <= this.#max) return;
    const counted = Math.max(estimate, this.#serverCount);
    const error = new StreamCutError({ countedTokens: counted, maxOutputTokens: this.#max });
    this.#own.abort(error);
    throw error;
  }
}
