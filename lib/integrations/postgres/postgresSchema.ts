/** The tables a `PostgresStore` keeps, in its schema. Each statement is idempotent. */
export function schemaStatements(schema: string): string[] {
  const s = quoteIdent(schema);
  return [
    `CREATE SCHEMA IF NOT EXISTS ${s}`,
    // One row a batch: its manifest (tasks in order, limits) and who holds its lock.
    `CREATE TABLE IF NOT EXISTS ${s}.agent_sm_batches (
      batch_id text PRIMARY KEY,
      manifest jsonb NOT NULL,
      owner text,
      created_at timestamptz NOT NULL DEFAULT now()
    )`,
    // One row a run, with the facts questions across runs ask for, filled in when it ends.
    // A run set aside (overwritten) keeps its row and lines, with set_aside_at.
    `CREATE TABLE IF NOT EXISTS ${s}.agent_sm_runs (
      run_key bigserial PRIMARY KEY,
      batch_id text NOT NULL,
      run_id text NOT NULL,
      started_at timestamptz NOT NULL,
      set_aside_at timestamptz,
      ended_at timestamptz,
      outcome text,
      reason text,
      cost_usd double precision NOT NULL DEFAULT 0,
      calls integer NOT NULL DEFAULT 0,
      duration_ms double precision NOT NULL DEFAULT 0
    )`,
    // Why a run was set aside: 'overwrite' (another batch of the same id took its place) or
    // 'resume' (an attempt cut off, continued by a new one). A resume reads its own attempts only.
    `ALTER TABLE ${s}.agent_sm_runs ADD COLUMN IF NOT EXISTS set_aside_by text`,
    // The three figures of money apart (cost_usd is billed + uncertain, what caps count): its
    // uncertain part, why (each reason and its calls, JSON), and what was released. NULL in a
    // row ended before these columns: its readers make them again from its lines.
    `ALTER TABLE ${s}.agent_sm_runs ADD COLUMN IF NOT EXISTS uncertain_usd double precision`,
    `ALTER TABLE ${s}.agent_sm_runs ADD COLUMN IF NOT EXISTS released_usd double precision`,
    `ALTER TABLE ${s}.agent_sm_runs ADD COLUMN IF NOT EXISTS uncertain jsonb`,
    // The LLM calls of unknown cost (no price, no hold) and why: in none of the dollars. NULL in
    // a row ended before these columns: made again from its lines, as above.
    `ALTER TABLE ${s}.agent_sm_runs ADD COLUMN IF NOT EXISTS unpriced_calls integer`,
    `ALTER TABLE ${s}.agent_sm_runs ADD COLUMN IF NOT EXISTS unpriced jsonb`,
    `CREATE UNIQUE INDEX IF NOT EXISTS agent_sm_runs_live ON ${s}.agent_sm_runs (batch_id, run_id) WHERE set_aside_at IS NULL`,
    `CREATE INDEX IF NOT EXISTS agent_sm_runs_started ON ${s}.agent_sm_runs (started_at DESC)`,
    // A run's lines, each the JSON of its line in a history file (text, not jsonb: byte for byte).
    `CREATE TABLE IF NOT EXISTS ${s}.agent_sm_run_lines (
      run_key bigint NOT NULL REFERENCES ${s}.agent_sm_runs (run_key),
      line_no integer NOT NULL,
      line text NOT NULL,
      PRIMARY KEY (run_key, line_no)
    )`,
    // People's answers to the calls a batch's runs wait on (agent-sm approve --store): one row a
    // call of a run, its answer as given (JSON) and when the batch took it; answerRows.ts.
    `CREATE TABLE IF NOT EXISTS ${s}.agent_sm_answers (
      batch_id text NOT NULL,
      run_id text NOT NULL,
      call_id text NOT NULL,
      answer jsonb NOT NULL,
      waiting_since double precision,
      taken_at timestamptz,
      PRIMARY KEY (batch_id, run_id, call_id)
    )`,
    // Requests to raise a paused batch's cap (agent-sm raise --store), in the order kept, and
    // the pause a batch notes for its readers; raiseRows.ts.
    `CREATE TABLE IF NOT EXISTS ${s}.agent_sm_raises (
      raise_no bigserial PRIMARY KEY,
      batch_id text NOT NULL,
      max_cost_usd double precision NOT NULL,
      asked_at double precision NOT NULL,
      set_aside_at timestamptz
    )`,
    `CREATE INDEX IF NOT EXISTS agent_sm_raises_batch ON ${s}.agent_sm_raises (batch_id, raise_no)`,
    `CREATE TABLE IF NOT EXISTS ${s}.agent_sm_pauses (
      batch_id text PRIMARY KEY,
      pause jsonb NOT NULL
    )`,
  ];
}

/** An identifier as SQL takes it, quoted. */
export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** The tables of schema `schema`, quoted, as statements name them. */
export interface SchemaTables {
  batches: string;
  runs: string;
  lines: string;
  answers: string;
  raises: string;
  pauses: string;
}

export function schemaTables(schema: string): SchemaTables {
  const s = quoteIdent(schema);
  return {
    batches: `${s}.agent_sm_batches`,
    runs: `${s}.agent_sm_runs`,
    lines: `${s}.agent_sm_run_lines`,
    answers: `${s}.agent_sm_answers`,
    raises: `${s}.agent_sm_raises`,
    pauses: `${s}.agent_sm_pauses`,
  };
}
