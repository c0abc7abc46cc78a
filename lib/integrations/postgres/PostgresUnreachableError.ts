import { formatDuration } from '../../internal/formatDuration';

/**
 * PostgreSQL did not answer: where, which operation waited, for how long, and the
 * connection's error. Nothing that needed the answer went on: a run whose `reserve` line was
 * not committed makes no call.
 */
export class PostgresUnreachableError extends Error {
  override readonly name = 'PostgresUnreachableError';
  /** `host:port` of the server that did not answer. */
  readonly address: string;
  /** What waited: `opening run r1 of batch b`, `committing 3 lines of run r1`. */
  readonly operation: string;
  /** How long it waited, in milliseconds. */
  readonly waitedMs: number;

  constructor(address: string, operation: string, waitedMs: number, cause: unknown) {
    const why = cause instanceof Error ? cause.message || cause.name : String(cause);
    super(`PostgreSQL at ${address} unreachable: ${operation} had no answer for ${formatDuration(waitedMs)} (${why})`, {
      cause,
    });
    this.address = address;
    this.operation = operation;
    this.waitedMs = waitedMs;
  }
}
