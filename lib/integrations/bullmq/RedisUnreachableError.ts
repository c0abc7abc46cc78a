import { formatDuration } from '../../internal/formatDuration';

/**
 * Redis did not answer within the bound an operation was given: what was unreachable, which
 * operation waited, for how long, and the connection's last error.
 */
export class RedisUnreachableError extends Error {
  override readonly name = 'RedisUnreachableError';
  /** `host:port` (or the socket path) of the Redis that did not answer. */
  readonly address: string;
  /** What waited: `submitBatch: writing the batch`, `RedisBudget.reserve('llm')`. */
  readonly operation: string;
  /** How long it waited, in milliseconds. */
  readonly waitedMs: number;

  constructor(address: string, operation: string, waitedMs: number, lastError?: string) {
    super(
      `Redis at ${address} unreachable: ${operation} had no answer for ${formatDuration(waitedMs)}` +
        (lastError === undefined ? '' : ` (last connection error: ${lastError})`),
    );
    this.address = address;
    this.operation = operation;
    this.waitedMs = waitedMs;
  }
}
