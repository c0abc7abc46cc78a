import path from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

/**
 * What the test MCP server reports on stderr: `ready`; `request` (every request as it arrives,
 * with `method`, `requestId` and, for tools/call, `tool`); `called`, `started`, `aborted` (from
 * the tools); `notifications/cancelled` (as it arrives).
 */
export interface ServerEvent {
  event: string;
  method?: string;
  tool?: string;
  requestId?: number;
  reason?: string;
  args?: Record<string, unknown>;
}

export interface McpServerProcess {
  /** A client connected to the server over stdio. */
  client: Client;
  /** Every event the server reported so far, in order. */
  readonly events: ServerEvent[];
  /** The first event (already seen or still to come) that matches; rejects if the server exits first. */
  waitFor(match: (e: ServerEvent) => boolean): Promise<ServerEvent>;
  /**
   * Resolves once every event the server reported before now is in `events`. Results come on
   * stdout and events on stderr, two pipes with no order between them: a test that checks
   * what the server saw (or did not see) after a call syncs first.
   */
  sync(): Promise<void>;
  /** Resolves when the server process has exited. */
  readonly exited: Promise<void>;
  close(): Promise<void>;
}

const ROOT = path.resolve(__dirname, '..', '..');

/** Starts test/fixtures/mcp/server.ts as a child process (node --import tsx) and connects a client to it. */
export async function startMcpServer(): Promise<McpServerProcess> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ['--import', 'tsx', path.join(ROOT, 'test/fixtures/mcp/server.ts')],
    cwd: ROOT,
    stderr: 'pipe',
  });
  const events: ServerEvent[] = [];
  const waiters = new Set<{ done: () => boolean; resolve: () => void }>();
  let onExit: () => void = () => {};
  const exited = new Promise<void>((resolve) => (onExit = resolve));
  const until = (done: () => boolean): Promise<void> => {
    if (done()) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      waiters.add({ done, resolve });
      void exited.then(() =>
        reject(new Error(`the MCP server exited before the awaited event; it reported: ${JSON.stringify(events)}`)),
      );
    });
  };
  // `stderr: 'pipe'` makes it a PassThrough, a Readable (the SDK types it as a bare Stream).
  // Lines that are not our JSON (a warning the runtime prints) are kept as `{ event: 'stderr' }`.
  createInterface({ input: transport.stderr as Readable })
    .on('line', (line) => {
      let event: ServerEvent;
      try {
        event = JSON.parse(line) as ServerEvent;
      } catch {
        event = { event: 'stderr', reason: line };
      }
      events.push(event);
      for (const w of [...waiters].filter((w) => w.done())) {
        waiters.delete(w);
        w.resolve();
      }
    })
    .on('close', onExit);
  const client = new Client({ name: 'asm-test-client', version: '1.0.0' });
  await client.connect(transport);
  let pings = 0;
  const pingsSeen = (): number => events.filter((e) => e.event === 'request' && e.method === 'ping').length;
  return {
    client,
    events,
    exited,
    async waitFor(match) {
      await until(() => events.some(match));
      return events.find(match)!;
    },
    async sync() {
      const target = ++pings;
      await client.ping();
      await until(() => pingsSeen() >= target);
    },
    close: () => client.close(),
  };
}
