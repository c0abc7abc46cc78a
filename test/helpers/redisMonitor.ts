import { Redis } from 'ioredis';

/** A MONITOR connection: every command Redis runs reaches `onCommand` until `stop`. */
export interface RedisMonitor {
  stop(): void;
}

/**
 * Opens a MONITOR connection to `url`, its listeners attached before it connects.
 *
 * ioredis's own `redis.monitor()` hands the connection back only once it is monitoring, and
 * switches to monitoring a tick after Redis's OK: on a busy server the first command lines come
 * in the same read as that OK, are taken for replies to no command, and are emitted as
 * "Command queue state error" before a caller could listen (an unhandled 'error' that failed a
 * CI run). Here those, and the lines that trail `stop`, are ignored; the first lines are
 * whatever other tests ran, since a test starts what it watches after this resolves.
 */
export async function monitorRedis(url: string, onCommand: (args: string[]) => void): Promise<RedisMonitor> {
  const connection = new Redis(url, { monitor: true, lazyConnect: true });
  connection.on('error', () => undefined);
  connection.on('monitor', (_time: string, args: string[]) => onCommand(args));
  const monitoring = new Promise<void>((resolve) => connection.once('monitoring', () => resolve()));
  await connection.connect();
  await monitoring;
  return { stop: () => connection.disconnect() };
}
