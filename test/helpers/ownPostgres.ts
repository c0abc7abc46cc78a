// A PostgreSQL 15 server of the test's own (initdb and pg_ctl, in a temporary folder, on a
// free port), for tests that kill it and start it again. initdb refuses to run as root: as
// root, the server is run as the `postgres` user (runuser).
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { freePort } from './redis';

const BIN = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin';

/** A server the test owns: its URL, and a kill (an immediate shutdown, as a crash) and a start it controls. */
export interface OwnPostgres {
  readonly url: string;
  readonly port: number;
  /** Stops it as a crash does (`pg_ctl stop -m immediate`: no checkpoint; recovery replays the WAL at the next start). */
  kill(): void;
  /** Starts it, waiting until it takes connections. */
  start(): void;
  /** Stops it, if running, and removes its folder. */
  destroy(): void;
}

/** Makes and starts a server in a new temporary folder. */
export async function ownPostgres(): Promise<OwnPostgres> {
  const port = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-pg-own-'));
  const data = path.join(dir, 'data');
  const asRoot = process.getuid?.() === 0;
  if (asRoot) execFileSync('chown', ['postgres', dir]);
  const run = (tool: string, args: string[]): void => {
    const [command, all] = asRoot
      ? ['runuser', ['-u', 'postgres', '--', path.join(BIN, tool), ...args]]
      : [path.join(BIN, tool), args];
    execFileSync(command, all, { stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000 });
  };
  run('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
  const start = (): void =>
    run('pg_ctl', [
      '-D',
      data,
      '-o',
      `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1`,
      '-l',
      path.join(dir, 'log'),
      '-w',
      'start',
    ]);
  let running = false;
  const own: OwnPostgres = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    kill: () => {
      run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      running = false;
    },
    start: () => {
      start();
      running = true;
    },
    destroy: () => {
      try {
        if (running) own.kill();
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  };
  own.start();
  return own;
}
