import { createHash } from 'node:crypto';
import type { PoolClient } from 'pg';
import { readRunFile, type RunFileFacts, type RunLineWriter } from 'agent-state-machine/history';
import { LineFeed } from './LineFeed';
import { ignore } from '../../internal/ignore';

/** What the writer of one run's lines needs of its store. */
export interface RunLineStore {
  /** The store's table of lines, quoted. */
  readonly lines: string;
  /** A statement safe to send twice, tried again on a new connection when its connection is lost. */
  runAgain<T>(operation: string, work: (client: PoolClient) => Promise<T>): Promise<T>;
  /** Records how the run ended in its row. */
  recordEnd(facts: RunFileFacts): Promise<void>;
}

/**
 * The `RunLineWriter` of run `key` of a `PostgresStore`: each commit one INSERT, whose
 * synchronous_commit is the commit's durability. The run's facts are read from its lines as
 * they are committed, so its end records them with no read of its lines back.
 */
export function runLineWriter(store: RunLineStore, key: string, runId: string, where: string): RunLineWriter {
  const sql = lineStatements(store.lines);
  const feed = new LineFeed();
  const facts = readRunFile(where, { input: feed, onWarning: ignore });
  // Awaited by end(); until then a failure must not count as unhandled.
  facts.catch(ignore);
  let next = 1;
  return {
    append: async (lines, durable) => {
      const first = next;
      next += lines.length;
      const one = lines.length === 1;
      let sent = false;
      await store.runAgain(`committing ${one ? 'a line' : `${lines.length} lines`} of run ${runId}`, (client) => {
        // A line goes in at its number once: a statement sent again, after a connection lost
        // on the way, leaves one the first sending committed. The first sending cannot meet
        // one (the run's numbers are its own), so it spares the server the check.
        const text = one ? (sent ? sql.oneAgain : sql.one) : sent ? sql.manyAgain : sql.many;
        sent = true;
        return client.query({ ...text, values: [durable ? 'on' : 'off', key, first, one ? lines[0] : lines] });
      });
      feed.push(lines);
    },
    end: async () => {
      feed.end();
      await store.recordEnd(await facts);
    },
  };
}

interface Statement {
  readonly name: string;
  readonly text: string;
}

const statements = new Map<string, Record<'one' | 'oneAgain' | 'many' | 'manyAgain', Statement>>();

/**
 * One statement a commit, so one commit, whose synchronous_commit is the lines' durability;
 * each prepared once a connection (named after its text), so a commit's statement is not
 * parsed and planned again each time.
 */
function lineStatements(table: string): Record<'one' | 'oneAgain' | 'many' | 'manyAgain', Statement> {
  let found = statements.get(table);
  if (found === undefined) {
    const texts = lineTexts(table);
    const named = (text: string): Statement => ({
      name: `agent_sm_${createHash('sha1').update(text).digest('hex').slice(0, 16)}`,
      text,
    });
    found = {
      one: named(texts.one),
      oneAgain: named(texts.oneAgain),
      many: named(texts.many),
      manyAgain: named(texts.manyAgain),
    };
    statements.set(table, found);
  }
  return found;
}

function lineTexts(table: string): { one: string; oneAgain: string; many: string; manyAgain: string } {
  const level = `WITH level AS (SELECT set_config('synchronous_commit', $1, true))`;
  const one = `${level} INSERT INTO ${table} (run_key, line_no, line) SELECT $2, $3, $4 FROM level`;
  const many = `${level} INSERT INTO ${table} (run_key, line_no, line)
    SELECT $2, $3 + u.o - 1, u.l FROM level, unnest($4::text[]) WITH ORDINALITY AS u(l, o)`;
  const again = ' ON CONFLICT (run_key, line_no) DO NOTHING';
  return { one, oneAgain: one + again, many, manyAgain: many + again };
}
