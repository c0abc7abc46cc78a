import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** A request a local protocol server received: its parsed JSON body and headers. */
export interface ReceivedRequest {
  path: string;
  headers: http.IncomingHttpHeaders;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- untyped JSON, which the servers check field by field
  body: any;
}

/** How a handler answers: JSON with a status, or server-sent events it writes itself. */
export interface Exchange {
  json(status: number, body: unknown, headers?: Record<string, string>): void;
  /** Starts an SSE response; `write` sends one event, `end` closes it, `drop` cuts the connection mid-stream. */
  sse(): { write(data: string, event?: string): void; end(): void; drop(): void };
  /** Fires when the client goes away (an aborted request). */
  readonly closed: AbortSignal;
}

/** A server listening on 127.0.0.1 on a free port. */
export interface LocalServer {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  close(): Promise<void>;
}

/** Starts a node:http server on 127.0.0.1 and an ephemeral port that hands each JSON request to `handle`. */
export async function listenLocal(handle: (req: ReceivedRequest, ex: Exchange) => Promise<void>): Promise<LocalServer> {
  const sockets = new Set<Socket>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    const closed = new AbortController();
    res.on('close', () => closed.abort());
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const ex: Exchange = {
        closed: closed.signal,
        json(status, body, headers = {}) {
          if (res.destroyed) return;
          res.writeHead(status, { 'content-type': 'application/json', ...headers });
          res.end(JSON.stringify(body));
        },
        sse() {
          res.writeHead(200, {
            'content-type': 'text/event-stream',
            'cache-control': 'no-cache',
            connection: 'keep-alive',
          });
          return {
            write: (data, event) =>
              void (res.destroyed || res.write(`${event !== undefined ? `event: ${event}\n` : ''}data: ${data}\n\n`)),
            end: () => void res.end(),
            // Let what was written reach the client first, then cut the connection without ending the response.
            drop: () => void res.write('', () => setTimeout(() => res.socket?.destroy(), 10)),
          };
        },
      };
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null');
      } catch {
        ex.json(400, {
          error: {
            message: 'We could not parse the JSON body of your request.',
            type: 'invalid_request_error',
            param: null,
            code: null,
          },
        });
        return;
      }
      handle({ path: req.url ?? '/', headers: req.headers, body }, ex).catch((error: unknown) => {
        ex.json(500, {
          error: {
            message: `local server failed: ${error instanceof Error ? error.message : String(error)}`,
            type: 'server_error',
            param: null,
            code: null,
          },
        });
      });
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Waits `ms`, or until `signal` aborts. */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (ms <= 0 || signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
