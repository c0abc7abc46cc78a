// agent-state-machine/postgres: a batch's records (history, journal, money ledger) in PostgreSQL.
export { PostgresStore } from './PostgresStore';
export type { PostgresStoreOptions } from './PostgresStore';
export { PostgresUnreachableError } from './PostgresUnreachableError';
