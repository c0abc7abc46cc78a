import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { FileStore } from '../batch/keeping/FileStore';
import type { RunStore } from '../batch/keeping/RunStore';
import { messageOf } from '../internal/messageOf';

/** What `--store` takes, in messages. */
export const STORE_URLS = 'file:///path (a folder of batches) or postgres://user@host:port/database';

/**
 * The stores a `--store URL` can name, by the URL's scheme. Each is made when asked for: the
 * CLI runs without any SDK installed, and loads `agent-state-machine/postgres` (and `pg`) only
 * for a `postgres://` URL. A new store is one row here.
 */
const STORES: Record<string, (url: string) => RunStore | Promise<RunStore>> = {
  'file:': (url) => new FileStore(folderOf(url)),
  'postgres:': openPostgres,
  'postgresql:': openPostgres,
};

/**
 * The store a `--store URL` names. Its tables or folder are made when missing, so a command on
 * a new store answers "no runs".
 */
export async function openStore(url: string): Promise<RunStore> {
  const scheme = /^[a-z][a-z0-9+.-]*:/i.exec(url)?.[0].toLowerCase();
  const open = scheme === undefined ? undefined : STORES[scheme];
  if (open === undefined) throw new Error(`--store ${JSON.stringify(url)}: expected a store URL, ${STORE_URLS}`);
  return open(url);
}

/** `file:///abs/path`, or `file:` and a path (`file:./runs`, read from the working folder). */
function folderOf(url: string): string {
  if (url.startsWith('file://')) {
    try {
      return fileURLToPath(url);
    } catch (error) {
      throw new Error(
        `--store ${JSON.stringify(url)}: ${messageOf(error)}; expected file:///absolute/path or file:./relative/path`,
        {
          cause: error,
        },
      );
    }
  }
  const rest = url.slice('file:'.length);
  if (rest === '')
    throw new Error(`--store "file:": expected a folder after it, file:///absolute/path or file:./relative/path`);
  return path.resolve(rest);
}

async function openPostgres(url: string): Promise<RunStore> {
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
