import type { RunStore } from '../batch/RunStore';
import { messageOf } from '../internal/messageOf';

/**
 * The store a `--store URL` names, loaded when asked for: the CLI runs without any SDK
 * installed, and loads `agent-state-machine/postgres` (and `pg`) only for a `postgres://` URL.
 * Its tables are made when missing, so a command on a new database answers "no runs".
 */
export async function openStore(url: string): Promise<RunStore> {
  if (!/^postgres(ql)?:\/\//.test(url))
    throw new Error(`--store ${JSON.stringify(url)}: expected a PostgreSQL URL, postgres://user@host:port/database`);
  // Not a literal: the bundle leaves it to Node, which finds the package's own subpath export.
  const specifier = 'agent-state-machine/postgres';
  let loaded: { PostgresStore: new (url: string) => RunStore };
  try {
    loaded = (await import(specifier)) as typeof loaded;
  } catch (error) {
    const noPg = /Cannot find (module|package) 'pg'/.test(messageOf(error));
    throw new Error(
      noPg
        ? `--store ${safeUrl(url)} needs the pg package: npm install pg`
        : `--store ${safeUrl(url)}: cannot load ${specifier}: ${messageOf(error)}`,
      { cause: error },
    );
  }
  return new loaded.PostgresStore(url);
}

/** A URL as it may be shown: without its password. */
export function safeUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.password = '';
    return parsed.toString();
  } catch {
    return '(an unreadable URL)';
  }
}
