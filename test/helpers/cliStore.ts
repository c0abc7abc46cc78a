// A store for a test of the built CLI, of either kind, new for each test: PostgreSQL in a schema
// of its own (its URL sets the search path, as a user's would), or a folder of batches (a file:
// URL). `open()` gives a handle on it in the test's process; `drop()` removes what it kept.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { PostgresStore } from '../../lib/integrations/postgres';
import { FileStore, type RunStore } from '../../lib/subpaths/batch';
import { PG_URL, testSchema } from './postgres';

export type StoreKind = 'postgres' | 'file';

export interface CliStore {
  readonly kind: StoreKind;
  /** What `--store` and a fixture's STORE_URL take. */
  readonly url: string;
  open(): RunStore;
  drop(): Promise<void>;
}

export async function cliStore(kind: StoreKind): Promise<CliStore> {
  if (kind === 'postgres') {
    const db = await testSchema();
    const url = `${PG_URL}?options=${encodeURIComponent(`-c search_path=${db.schema}`)}`;
    return { kind, url, open: () => new PostgresStore(url), drop: () => db.drop() };
  }
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-cli-store-'));
  return {
    kind,
    url: pathToFileURL(root).href,
    open: () => new FileStore(root),
    drop: () => Promise.resolve(fs.rmSync(root, { recursive: true, force: true })),
  };
}
