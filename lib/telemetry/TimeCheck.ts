import { HistoryFileError } from '../history/HistoryFileError';
import { InvalidArgumentError } from '../machine/InvalidArgumentError';
import { MAX_OTLP_MS } from './otlpValues';

/** Checks times against what OTLP can carry, naming the item they are on. */
export class TimeCheck {
  #line: number | undefined;
  #name = '';
  #file: string | undefined;

  constructor(readonly warn: (message: string) => void) {}

  /** The item the next checks are about. */
  at(line: number | undefined, name: string, file: string | undefined): void {
    this.#line = line;
    this.#name = name;
    this.#file = file;
  }

  get #where(): string {
    if (this.#line === undefined) return this.#name;
    return this.#file === undefined ? `line ${this.#line}` : `${this.#file}:${this.#line}`;
  }

  /** A time the item stands on: refused unless OTLP can carry it. */
  real(ms: number, field: string): void {
    if (ms >= 0 && ms <= MAX_OTLP_MS) return;
    const reason = `${field} ${String(ms)} is not a real time: expected epoch milliseconds from 0 to ${MAX_OTLP_MS} (OTLP's nanosecond timestamps end in 2554)`;
    if (this.#line !== undefined && this.#file !== undefined)
      throw new HistoryFileError('corrupt_line', this.#file, reason, { line: this.#line });
    throw new InvalidArgumentError(
      this.#line === undefined ? `${this.#name}.${field}` : `line ${this.#line}: ${field}`,
      'epoch milliseconds from 0 to 18446744073709 (OTLP time ends in 2554)',
      ms,
    );
  }

  /** When a move entered its state: `at - durationMs`, clamped between the epoch and `at`. */
  entered(at: number, durationMs: number): number {
    const entered = at - durationMs;
    if (entered >= 0 && entered <= at) return entered;
    this.warn(
      `${this.#where}: durationMs ${String(durationMs)} cannot be real (the move would have entered its state ${durationMs < 0 ? 'after it left' : 'before 1970'}); clamped to ${entered < 0 ? at : 0}`,
    );
    return entered < 0 ? 0 : at;
  }

  /** A tool's recorded start, if OTLP can carry it; otherwise dropped with a warning. */
  toolStart(startedAt: number | undefined, index: number): number | undefined {
    if (startedAt === undefined || (startedAt >= 0 && startedAt <= MAX_OTLP_MS)) return startedAt;
    this.warn(`${this.#where}: results[${index}].startedAt ${String(startedAt)} is not a real time; ignored`);
    return undefined;
  }

  /** A tool's end: `started + ms`, clamped to the last time OTLP can carry. */
  toolEnd(started: number, ms: number, index: number): number {
    const end = started + ms;
    if (end <= MAX_OTLP_MS) return end;
    this.warn(`${this.#where}: results[${index}].ms ${String(ms)} would end the tool after 2554; clamped`);
    return MAX_OTLP_MS;
  }
}
