/**
 * A batch's records (history, journal, money ledger) in PostgreSQL (`pg`, an optional peer dependency).
 *
 * @module agent-state-machine/postgres
 */
export { PostgresStore } from './PostgresStore';
export type { PostgresStoreOptions } from './PostgresStore';
export { PostgresUnreachableError } from './PostgresUnreachableError';
