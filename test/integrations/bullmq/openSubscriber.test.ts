import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { Redis } from 'ioredis';
import { openSubscriber } from '../../../lib/integrations/bullmq/openSubscriber';
import { releaseRedis, testRedisUrl, uniquePrefix } from '../../helpers/redis';
import { startTcpProxy, type TcpProxy } from '../../helpers/tcpProxy';

// The subscriber talks to Redis through a proxy the test controls: it cuts the connection and
// holds Redis's replies back at the moments the test chooses.
let url: string;
let proxy: TcpProxy;
beforeAll(async () => {
  url = await testRedisUrl();
});
afterAll(releaseRedis);
beforeEach(async () => {
  proxy = await startTcpProxy(url);
});
afterEach(() => proxy.close());

/** Resolves on the client's next `ready`; `then` runs in that same turn, before anything else. */
const nextReady = (client: Redis, then: () => void = () => undefined): Promise<void> =>
  new Promise((resolve) =>
    client.once('ready', () => {
      then();
      resolve();
    }),
  );

async function publishUntilHeard(channel: string, heard: string[], message: string): Promise<void> {
  const publisher = new Redis(url);
  try {
    // PUBLISH returns how many subscribers got it: 0 until the SUBSCRIBE has been answered.
    while ((await publisher.publish(channel, message)) === 0) await new Promise((r) => setTimeout(r, 10));
    while (!heard.includes(message)) await new Promise((r) => setTimeout(r, 10));
  } finally {
    publisher.disconnect();
  }
}

describe('openSubscriber', () => {
  it('hears its channel, and hears it again after its connection is cut (it subscribes anew on each ready)', async () => {
    const channel = `${uniquePrefix('subscriber')}:aborts`;
    const heard: string[] = [];
    const errors: Error[] = [];
    const client = openSubscriber(proxy.url, { [channel]: (m) => heard.push(m) }, (e) => errors.push(e));
    try {
      await publishUntilHeard(channel, heard, 'first');
      const back = nextReady(client);
      proxy.cut();
      await back;
      await publishUntilHeard(channel, heard, 'second');
      expect(heard).toEqual(['first', 'second']);
      expect(errors).toEqual([]);
    } finally {
      client.disconnect();
    }
  });

  it('closed while the SUBSCRIBE it sent on a reconnect awaits its reply: its process goes on, nothing reported', async () => {
    // In a process of its own: an unhandled rejection ends a Node process (exit code 1), which is
    // what it would do to a batch worker closing after a Redis restart.
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', path.join(__dirname, 'fixtures/subscriberClosedOnReconnect.ts')],
      {
        cwd: path.resolve(__dirname, '../../..'),
        env: { ...process.env, REDIS_URL: url, CHANNEL: `${uniquePrefix('subscriber')}:aborts` },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    expect({ code, out, err: err.includes('Connection is closed') ? err : '' }).toEqual({
      code: 0,
      out: 'closed cleanly\n',
      err: '',
    });
  }, 20_000);
});
