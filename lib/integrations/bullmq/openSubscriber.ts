import type { Redis } from 'ioredis';
import { asError } from '../../internal/asError';
import { messageOf } from '../../internal/messageOf';
import { openRedis, type RedisConnection } from './connection';

/**
 * A client subscribed to `channels` (each with what hears it) for as long as it lives, across Redis restarts.
 *
 * ioredis's own resubscription (`autoResubscribe`) sends SUBSCRIBE on each reconnect and never
 * handles its reply: a client closed before that reply arrives rejects it unhandled, which ends
 * a Node process. This client subscribes itself on every `ready` instead. A subscription cut by
 * a closing connection is expected (the next `ready` subscribes again, or the client is being
 * closed); anything else is said through `onError`.
 */
export function openSubscriber(
  connection: RedisConnection,
  channels: Readonly<Record<string, (message: string) => void>>,
  onError: (error: Error) => void,
): Redis {
  const client = openRedis(connection, 'connection', { autoResubscribe: false });
  const subscribe = (): void => {
    client.subscribe(...Object.keys(channels)).catch((error: unknown) => {
      if (messageOf(error) !== CONNECTION_CLOSED) onError(asError(error));
    });
  };
  client.on('ready', subscribe);
  client.on('message', (from: string, message: string) => {
    if (Object.hasOwn(channels, from)) channels[from]!(message);
  });
  return client;
}

/** The message ioredis rejects a command with when its connection closes before the reply. */
const CONNECTION_CLOSED = 'Connection is closed.';
