// The durable-runs crash test on PostgresStore: a journaled batch of OpenAI Chat loops (the real
// openai SDK) writing to PostgreSQL, killed with SIGKILL when request k+1 reaches a local server
// that bills each answer (k chosen by a seeded generator), in every durability mode with and
// without group commit, then resumed from the store in a new process.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadHistory, validateHistory } from '../../../lib/subpaths/history';
import { PostgresStore } from '../../../lib/integrations/postgres';
import { batchChild, billingServer, CALL_USD } from '../../helpers/killableBatch';
import { PG_URL, storedRuns, testSchema } from '../../helpers/postgres';
import { seeded } from '../../helpers/seeded';

jest.setTimeout(120_000);

const TASKS = 12;
const CONCURRENCY = 3;
/** Two LLM calls a run (a tool call, then the answer): 24 calls, $0.24, if nothing stopped the batch. */
const CAP_USD = 0.15;
const CALLS_PER_TURN = 2;
const IDS = Array.from({ length: TASKS }, (_, i) => `task-${i}`);

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-pg-crash-'));
afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

/** One chunk as a stream, as a history reader takes it. */
async function* once(chunk: Uint8Array): AsyncGenerator<Uint8Array> {
  yield chunk;
}

const MODES = ['none', 'turn', 'move'] as const;
const random = seeded(38);
// Two kills for each durability mode, with and without group commit: 12 kills. k stays below
// the cap's reach (15 calls), so the kill always comes.
const KILLS = MODES.flatMap((durability) =>
  [false, true].flatMap((group) =>
    Array.from({ length: 2 }, () => [1 + Math.floor(random() * 12), durability, group] as const),
  ),
);

describe('a journaled batch on PostgresStore, killed with SIGKILL and resumed from the store in a new process', () => {
  it.concurrent.each(KILLS)(
    'killed after %i answered requests (durability %s, group commit %s): within the cap, every task once, nothing journaled sent again',
    async (k, durability, group) => {
      const db = await testSchema();
      const store = new PostgresStore(PG_URL, { schema: db.schema });
      const llm = await billingServer(k);
      try {
        const args = (mode: string): string[] => [
          mode,
          PG_URL,
          llm.server.baseURL,
          durability,
          group ? '1' : '0',
          String(CAP_USD),
          db.schema,
        ];
        const killed = batchChild(work, args('run'));
        await Promise.race([
          llm.heldRequest,
          killed.exited.then(({ code }) => {
            throw new Error(`the batch exited (${code}) before request ${k + 1}: ${killed.stderr()}`);
          }),
        ]);
        killed.kill();
        expect((await killed.exited).signal).toBe('SIGKILL');
        expect(llm.answered).toHaveLength(k);

        // What the killed process left in the store: ended runs' lines, and which answers reached it.
        const left = await storedRuns(store, 'crash', IDS);
        const ended = new Map<string, string>();
        for (const [id, text] of left) {
          const history = await loadHistory(id, { input: once(Buffer.from(text)) });
          if (history.records.length > 0 && validateHistory(history.entries).interrupted === undefined)
            ended.set(id, text);
        }

        llm.resume();
        const resumed = batchChild(work, args('resume'));
        const exit = await resumed.exited;
        expect({ exit, stderr: exit.code === 0 ? '' : resumed.stderr() }).toEqual({
          exit: { code: 0, signal: null },
          stderr: '',
        });
        const report = JSON.parse(resumed.stdout()) as { runs: { id: string; resumed: string | null }[] };

        // Every task reported exactly once, and the store holds one run in place for each that ran.
        expect(report.runs.map((r) => r.id).sort()).toEqual([...IDS].sort());
        const after = await storedRuns(store, 'crash', IDS);
        const listed = await store.listRuns({ batchId: 'crash' });
        expect(listed.map((r) => r.runId).sort()).toEqual([...after.keys()].sort());
        // Ended runs were not run again: their lines are as the killed process left them.
        for (const [id, text] of ended) {
          expect(after.get(id)).toBe(text);
          expect(report.runs.find((r) => r.id === id)!.resumed).toBe('finished');
        }
        // Billed across both processes: within the cap and the bound of docs/batches.md ("What a crash costs").
        const billed = llm.answered.length * CALL_USD;
        const bound = CONCURRENCY * CALL_USD + CONCURRENCY * (group ? CALLS_PER_TURN : 1) * CALL_USD;
        expect(billed).toBeLessThanOrEqual(CAP_USD + bound + 1e-9);
        // No request whose answer reached the store is sent again: cut-off runs continue from their journal.
        const all = [...left.values()].join('\n');
        const journaled = new Set(llm.answered.filter((a) => all.includes(a.mark)).map((a) => a.hash));
        expect(llm.answered.filter((a) => a.phase > 1 && journaled.has(a.hash))).toEqual([]);
      } finally {
        await llm.server.close();
        await store.close();
        await db.drop();
      }
    },
  );
});
