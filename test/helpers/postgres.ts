import { Client } from 'pg';

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
