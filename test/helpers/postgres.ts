import { Client } from 'pg';
import type { RunStore } from '../../lib/subpaths/batch';
import { HistoryFileError } from '../../lib/subpaths/history';

/** The PostgreSQL the tests use: PGURL, else the local server every machine here runs. */
export const PG_URL = process.env.PGURL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

const HOW_TO_GET_ONE =
  'These tests need a PostgreSQL server. Set PGURL, or run one at 127.0.0.1:5432 with trust auth for user postgres ' +
  '(Debian/Ubuntu: `apt-get install postgresql`, then allow `host all all 127.0.0.1/32 trust` in pg_hba.conf; ' +
  'with Docker: `docker run -d -p 5432:5432 -e POSTGRES_HOST_AUTH_METHOD=trust postgres:15`).';

let made = 0;

/** A schema of the test's own, dropped (with its tables) by `drop`. */
export interface TestSchema {
  readonly schema: string;
  /** A client on the test's database, for looking at the tables directly. */
  readonly client: Client;
  drop(): Promise<void>;
}

/** Makes a schema for one test; fails, saying how to get one, when PostgreSQL is not there. */
export async function testSchema(): Promise<TestSchema> {
  const client = new Client({ connectionString: PG_URL, connectionTimeoutMillis: 3000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (error) {
    await client.end().catch(() => undefined);
    throw new Error(`PostgreSQL at ${PG_URL} unreachable (${(error as Error).message}). ${HOW_TO_GET_ONE}`, {
      cause: error,
    });
  }
  const schema = `agent_sm_test_${process.pid}_${++made}_${Math.random().toString(36).slice(2, 8)}`;
  await client.query(`CREATE SCHEMA "${schema}"`);
  return {
    schema,
    client,
    drop: async () => {
      try {
        await client.query(`DROP SCHEMA "${schema}" CASCADE`);
      } finally {
        await client.end();
      }
    },
  };
}

/** Each run's lines as `store` holds them now (the attempt in place), by run id; runs never opened left out. */
export async function storedRuns(
  store: RunStore,
  batchId: string,
  ids: readonly string[],
): Promise<Map<string, string>> {
  const runs = new Map<string, string>();
  for (const id of ids) {
    const chunks: Uint8Array[] = [];
    try {
      for await (const chunk of store.readRun(batchId, id)) chunks.push(chunk);
    } catch (error) {
      if (error instanceof HistoryFileError && error.code === 'not_found') continue;
      throw error;
    }
    runs.set(id, Buffer.concat(chunks).toString('utf8'));
  }
  return runs;
}
