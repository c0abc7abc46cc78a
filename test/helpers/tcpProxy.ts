import * as net from 'node:net';

/** A TCP proxy in front of a server (Redis, PostgreSQL), whose replies and connections a test controls. */
export interface TcpProxy {
  /** The target's URL with the proxy's host and port in its place (its scheme, user and path kept). */
  url: string;
  /** Replies from now on are held back (they reach the client on `release`). */
  hold(): void;
  release(): void;
  /** Cuts every client connection, as a server restart or a network fault would. */
  cut(): void;
  /**
   * Ends its `n`-th connection (from 0) on the client's side only: the server's side stays open,
   * as after a socket dropped between the two (the server's session lives on).
   */
  dropClientSide(n: number): void;
  /** From now on, connections are cut as they come; `refused` counts them. */
  refuse(): void;
  readonly refused: number;
  close(): Promise<void>;
}

export async function startTcpProxy(target: string): Promise<TcpProxy> {
  const { hostname, port } = new URL(target);
  const live = new Set<{ client: net.Socket; server: net.Socket }>();
  const made: Array<{ client: net.Socket; server: net.Socket; dropped: boolean }> = [];
  let holding = false;
  const held: Array<() => void> = [];
  let refusing = false;
  let refused = 0;
  const proxy = net.createServer((client) => {
    if (refusing) {
      refused += 1;
      client.destroy();
      return;
    }
    const server = net.connect(Number(port), hostname);
    const pair = { client, server, dropped: false };
    live.add(pair);
    made.push(pair);
    client.pipe(server);
    server.on('data', (chunk: Buffer) => {
      if (pair.dropped) return;
      if (holding) held.push(() => client.write(chunk));
      else client.write(chunk);
    });
    const end = (): void => {
      live.delete(pair);
      client.destroy();
      // A connection dropped on the client's side keeps its server side until the proxy closes.
      if (!pair.dropped) server.destroy();
    };
    client.on('close', end).on('error', end);
    server.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const url = new URL(target);
  url.host = `127.0.0.1:${(proxy.address() as net.AddressInfo).port}`;
  return {
    url: url.toString().replace(/\/$/, ''),
    hold: () => void (holding = true),
    release: () => {
      holding = false;
      for (const send of held.splice(0)) send();
    },
    cut: () => {
      for (const { client, server } of live) {
        client.destroy();
        server.destroy();
      }
    },
    dropClientSide: (n) => {
      const pair = made[n]!;
      pair.dropped = true;
      pair.client.unpipe(pair.server);
      pair.client.destroy();
    },
    refuse: () => void (refusing = true),
    get refused() {
      return refused;
    },
    close: async () => {
      for (const { client, server } of made) {
        client.destroy();
        server.destroy();
      }
      await new Promise((resolve) => proxy.close(resolve));
    },
  };
}
