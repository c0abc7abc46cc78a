import { Redis, type RedisOptions } from 'ioredis';
import { InvalidArgumentError } from 'agent-state-machine';

/** How to reach Redis: a `redis://` URL, ioredis options, or an ioredis client (which is duplicated, never closed). */
export type RedisConnection = string | RedisOptions | Redis;

/**
 * A client of our own. `maxRetriesPerRequest: null` makes commands wait through a Redis
 * restart instead of failing after 20 retries — BullMQ's workers require it, and a batch's
 * budget checks should wait rather than end runs as errors.
 */
export function openRedis(connection: RedisConnection, name = 'connection'): Redis {
  const client = newClient(connection, name);
  // Connection errors while Redis is away are expected: commands wait for the reconnect. Without
  // a listener ioredis would print each one as an unhandled error event.
  client.on('error', () => undefined);
  return client;
}

function newClient(connection: RedisConnection, name: string): Redis {
  if (connection instanceof Redis) return connection.duplicate({ maxRetriesPerRequest: null });
  if (typeof connection === 'string') {
    if (!/^rediss?:\/\//.test(connection))
      throw new InvalidArgumentError(name, 'a redis:// URL, ioredis options or an ioredis client', connection);
    return new Redis(connection, { maxRetriesPerRequest: null });
  }
  if (typeof connection === 'object' && connection !== null && !Array.isArray(connection))
    return new Redis({ ...connection, maxRetriesPerRequest: null });
  throw new InvalidArgumentError(name, 'a redis:// URL, ioredis options or an ioredis client', connection);
}

/** Queue names become Redis keys and a BullMQ queue: no `:` (BullMQ rejects it), not empty. */
export function assertQueueName(name: unknown): asserts name is string {
  if (typeof name !== 'string' || name === '' || name.includes(':'))
    throw new InvalidArgumentError('name', 'a non-empty queue name without `:`', name);
}
