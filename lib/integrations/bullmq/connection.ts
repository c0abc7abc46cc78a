import { Redis, type RedisOptions } from 'ioredis';
import { InvalidArgumentError } from 'agent-state-machine';
import { asError } from '../../internal/asError';
import { messageOf } from '../../internal/messageOf';
import { RedisUnreachableError } from './RedisUnreachableError';

/** How to reach Redis: a `redis://` URL, ioredis options, or an ioredis client (which is duplicated, never closed). */
export type RedisConnection = string | RedisOptions | Redis;

/** Each client's last connection error, for the message of a RedisUnreachableError. */
const lastErrors = new WeakMap<Redis, string>();

/**
 * A client of our own. `maxRetriesPerRequest: null` makes commands wait through a Redis
 * restart instead of failing after 20 retries — BullMQ's workers require it, and a batch's
 * budget checks should wait out a short restart rather than end runs as errors. How long they
 * wait is bounded by each operation (`bounded`), never by the client. `extra` adds ioredis
 * options of the caller's own (a subscriber's `autoResubscribe: false`).
 */
export function openRedis(connection: RedisConnection, name = 'connection', extra: RedisOptions = {}): Redis {
  const client = newClient(connection, name, { ...extra, maxRetriesPerRequest: null });
  // Connection errors while Redis is away are expected: commands wait for the reconnect, within
  // their bound. Without a listener ioredis would print each one as an unhandled error event.
  client.on('error', (error: unknown) => lastErrors.set(client, messageOf(error)));
  return client;
}

/** `host:port` of a client (or its socket path). */
export function addressOf(client: Redis): string {
  const { host, port, path } = client.options;
  return path ?? `${host ?? '127.0.0.1'}:${port ?? 6379}`;
}

/**
 * Runs `operation` against `client` within `timeoutMs` and `signal`: rejects with a
 * RedisUnreachableError naming the address, the operation and how long it waited when Redis
 * does not answer in time, or with the signal's reason when it aborts. The command itself may
 * still run once Redis is back (it waits in the client's queue); every script is written so
 * that a late one changes nothing that matters (a late reserve counts a call that was not made:
 * fail closed).
 */
export function bounded<T>(
  client: Redis,
  what: string,
  operation: () => Promise<T>,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<T> {
  if (signal?.aborted) return Promise.reject(abortReason(signal));
  return new Promise<T>((resolve, reject) => {
    const startedAt = Date.now();
    const timer = setTimeout(() => {
      done();
      reject(new RedisUnreachableError(addressOf(client), what, Date.now() - startedAt, lastErrors.get(client)));
    }, timeoutMs);
    const onAbort = (): void => {
      done();
      reject(abortReason(signal!));
    };
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    operation().then(
      (value) => {
        done();
        resolve(value);
      },
      (error: unknown) => {
        done();
        reject(asError(error));
      },
    );
  });
}

function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason : new Error(`aborted: ${messageOf(reason)}`);
}

/** Checks a bound option: a positive number of milliseconds. */
export function assertMs(name: string, value: unknown): asserts value is number {
  if (!(typeof value === 'number' && Number.isFinite(value) && value > 0))
    throw new InvalidArgumentError(name, 'a positive number of milliseconds', value);
}

function newClient(connection: RedisConnection, name: string, ours: RedisOptions): Redis {
  if (connection instanceof Redis) return connection.duplicate(ours);
  if (typeof connection === 'string') {
    if (!/^rediss?:\/\//.test(connection))
      throw new InvalidArgumentError(name, 'a redis:// URL, ioredis options or an ioredis client', connection);
    return new Redis(connection, ours);
  }
  if (typeof connection === 'object' && connection !== null && !Array.isArray(connection))
    return new Redis({ ...connection, ...ours });
  throw new InvalidArgumentError(name, 'a redis:// URL, ioredis options or an ioredis client', connection);
}

/** Queue names become Redis keys and a BullMQ queue: no `:` (BullMQ rejects it), not empty. */
export function assertQueueName(name: unknown): asserts name is string {
  if (typeof name !== 'string' || name === '' || name.includes(':'))
    throw new InvalidArgumentError('name', 'a non-empty queue name without `:`', name);
}
