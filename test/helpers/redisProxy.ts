import * as net from 'node:net';

/** A TCP proxy in front of a Redis, whose replies and connections a test controls. */
export interface RedisProxy {
  /** `redis://127.0.0.1:<port>` of the proxy. */
  url: string;
  /** Replies from now on are held back (they reach the client on `release`). */
  hold(): void;
  release(): void;
  /** Cuts every client connection, as a Redis restart or a network fault would. */
  cut(): void;
  close(): Promise<void>;
}

export async function startRedisProxy(target: string): Promise<RedisProxy> {
  const { hostname, port } = new URL(target);
  const pairs = new Set<{ client: net.Socket; server: net.Socket }>();
  let holding = false;
  const held: Array<() => void> = [];
  const proxy = net.createServer((client) => {
    const server = net.connect(Number(port), hostname);
    const pair = { client, server };
    pairs.add(pair);
    client.pipe(server);
    server.on('data', (chunk: Buffer) => {
      if (holding) held.push(() => client.write(chunk));
      else client.write(chunk);
    });
    const end = (): void => {
      pairs.delete(pair);
      client.destroy();
      server.destroy();
    };
    client.on('close', end).on('error', end);
    server.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const { port: own } = proxy.address() as net.AddressInfo;
  return {
    url: `redis://127.0.0.1:${own}`,
    hold: () => void (holding = true),
    release: () => {
      holding = false;
      for (const send of held.splice(0)) send();
    },
    cut: () => {
      for (const { client, server } of pairs) {
        client.destroy();
        server.destroy();
      }
    },
    close: async () => {
      for (const { client, server } of pairs) {
        client.destroy();
        server.destroy();
      }
      await new Promise((resolve) => proxy.close(resolve));
    },
  };
}
