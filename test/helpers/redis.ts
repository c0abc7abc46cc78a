import { spawn, type ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { Redis } from 'ioredis';

const HOW_TO_GET_ONE =
  'These tests need a Redis server. Set REDIS_URL, run one at 127.0.0.1:6379, or put redis-server on PATH ' +
  '(Debian/Ubuntu: `apt-get install redis-server`; with Docker: `docker run -d -p 6379:6379 redis:7`).';

async function answers(url: string): Promise<boolean> {
  const client = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    connectTimeout: 1000,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return (await client.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

function hasRedisServer(): boolean {
  try {
    execFileSync('redis-server', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** A redis-server of our own, on a free port: for tests that restart it. */
export interface OwnRedis {
  url: string;
  port: number;
  dir: string;
  /** Kills it (SIGKILL: nothing saved at exit) and waits for it to be gone. */
  kill(): Promise<void>;
  /** Starts it again on the same port and directory. */
  start(): Promise<void>;
  /** Kills it and removes its directory. */
  stop(): Promise<void>;
}

export async function startOwnRedis(extraArgs: string[] = []): Promise<OwnRedis> {
  if (!hasRedisServer()) throw new Error(`redis-server is not on PATH. ${HOW_TO_GET_ONE}`);
  const port = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'asm-redis-'));
  let child: ChildProcess | undefined;
  const start = async (): Promise<void> => {
    child = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', ...extraArgs],
      { stdio: 'ignore' },
    );
    const url = `redis://127.0.0.1:${port}`;
    for (let i = 0; i < 100; i++) {
      if (await answers(url)) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`redis-server on port ${port} did not start`);
  };
  const kill = async (): Promise<void> => {
    const c = child;
    if (c === undefined || c.exitCode !== null || c.signalCode !== null) return;
    const gone = new Promise((r) => c.once('exit', r));
    c.kill('SIGKILL');
    await gone;
  };
  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    dir,
    kill,
    start,
    stop: async () => {
      await kill();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

let shared: Promise<{ url: string; own?: OwnRedis }> | undefined;

/**
 * The Redis the tests use: REDIS_URL when it is set (and it must answer: a URL that was asked
 * for is never quietly replaced), else 127.0.0.1:6379, else a redis-server started on a free
 * port (stopped by `releaseRedis`). With none of them the tests fail, saying how to get one.
 */
export function testRedisUrl(): Promise<string> {
  shared ??= (async () => {
    const asked = process.env.REDIS_URL;
    if (asked !== undefined && asked !== '') {
      if (await answers(asked)) return { url: asked };
      throw new Error(
        `REDIS_URL is set to ${asked}, but no Redis answers there (PING within 1 s). Start one there, or unset REDIS_URL to use 127.0.0.1:6379.`,
      );
    }
    const candidates = ['redis://127.0.0.1:6379'];
    for (const url of candidates) if (await answers(url)) return { url };
    if (!hasRedisServer())
      throw new Error(`No Redis at ${candidates.join(' or ')} and no redis-server on PATH. ${HOW_TO_GET_ONE}`);
    const own = await startOwnRedis();
    return { url: own.url, own };
  })();
  return shared.then((s) => s.url);
}

/** Stops the redis-server `testRedisUrl` started, if it did. */
export async function releaseRedis(): Promise<void> {
  const s = await shared?.catch(() => undefined);
  await s?.own?.stop();
  shared = undefined;
}

/** Deletes every key under `prefix` (a test's own). */
export async function deletePrefix(url: string, prefix: string): Promise<void> {
  const client = new Redis(url);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await client.del(...keys);
    } while (cursor !== '0');
  } finally {
    client.disconnect();
  }
}

/** A key prefix no other test uses. */
export function uniquePrefix(label: string): string {
  return `asmtest-${label}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
}

/** A test file's Redis: the shared test server, a client of its own and a key prefix of its own. */
export interface FileRedis {
  readonly url: string;
  readonly client: Redis;
  readonly prefix: string;
}

/**
 * Gives a test file its Redis: connects before its tests, and after them disconnects, deletes
 * every key under its prefix and releases the server. Call it at the top of the file; `url` and
 * `client` are there once the file's `beforeAll` hooks have run.
 */
export function useFileRedis(label: string): FileRedis {
  const prefix = uniquePrefix(label);
  let url: string | undefined;
  let client: Redis | undefined;
  beforeAll(async () => {
    url = await testRedisUrl();
    client = new Redis(url);
  });
  afterAll(async () => {
    client?.disconnect();
    if (url !== undefined) await deletePrefix(url, prefix);
    await releaseRedis();
  });
  const ready = <T>(value: T | undefined, name: string): T => {
    if (value === undefined)
      throw new Error(`useFileRedis('${label}'): ${name} is read before the file's beforeAll ran`);
    return value;
  };
  return {
    prefix,
    get url() {
      return ready(url, 'url');
    },
    get client() {
      return ready(client, 'client');
    },
  };
}
