// Crash tests with real processes: a journaled batch of OpenAI Chat loops (the real openai SDK)
// against a local server that bills every request it answers, killed with SIGKILL at points a
// seeded generator chooses — when request k+1 reaches the server, the first k answered — in
// every durability mode with and without group commit, then resumed in a new process.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadHistory } from '../../lib/history/loadHistory';
import { validateHistory } from '../../lib/history/validateHistory';
import { batchChild, billingServer, CALL_USD } from '../helpers/killableBatch';
import { seeded } from '../helpers/seeded';

jest.setTimeout(120_000);

const TASKS = 12;
const CONCURRENCY = 3;
/** Two LLM calls a run (a tool call, then the answer): 24 calls, $0.24, if nothing stopped the batch. */
const CAP_USD = 0.15;
const CALLS_PER_TURN = 2;

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-crash-'));
afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

const child = (args: string[]): ReturnType<typeof batchChild> => batchChild(work, args);

const MODES = ['none', 'turn', 'move'] as const;
const random = seeded(24);
// Four kills for each durability mode, with and without group commit: 24 kills. k, the requests
// answered before the kill, stays below the cap's reach (15 calls), so the kill always comes.
const KILLS = MODES.flatMap((durability) =>
  [false, true].flatMap((group) =>
    Array.from({ length: 4 }, () => [1 + Math.floor(random() * 12), durability, group] as const),
  ),
);

describe('a journaled batch of real SDK loops, killed with SIGKILL and resumed in a new process', () => {
  it.concurrent.each(KILLS)(
    'killed after %i answered requests (durability %s, group commit %s): within the cap, every task once, ended files untouched',
    async (k, durability, group) => {
      const dir = fs.mkdtempSync(path.join(work, 'run-'));
      const llm = await billingServer(k);
      try {
        const args = (mode: string): string[] => [
          mode,
          dir,
          llm.server.baseURL,
          durability,
          group ? '1' : '0',
          String(CAP_USD),
        ];
        const killed = child(args('run'));
        await Promise.race([
          llm.heldRequest,
          killed.exited.then(({ code }) => {
            throw new Error(`the batch exited (${code}) before request ${k + 1}: ${killed.stderr()}`);
          }),
        ]);
        killed.kill();
        expect((await killed.exited).signal).toBe('SIGKILL');
        expect(llm.answered).toHaveLength(k);

        // What the killed process left: ended runs' bytes, and which answers reached a file.
        const files = new Map<string, string>();
        for (const name of fs.readdirSync(dir).filter((f) => f.endsWith('.jsonl')))
          files.set(name, fs.readFileSync(path.join(dir, name), 'utf8'));
        const ended = new Map<string, string>();
        for (const [name, text] of files) {
          const history = await loadHistory(path.join(dir, name));
          if (history.records.length > 0 && validateHistory(history.entries).interrupted === undefined)
            ended.set(name, text);
        }

        llm.resume();
        const resumed = child(args('resume'));
        const exit = await resumed.exited;
        // Its standard error only says why, when it failed (a warning about a file is no failure).
        expect({ exit, stderr: exit.code === 0 ? '' : resumed.stderr() }).toEqual({
          exit: { code: 0, signal: null },
          stderr: '',
        });
        const report = JSON.parse(resumed.stdout()) as {
          runs: { id: string; outcome: string; resumed: string | null }[];
        };

        // Every task reported exactly once.
        expect(report.runs.map((r) => r.id).sort()).toEqual(
          Array.from({ length: TASKS }, (_, i) => `task-${i}`).sort(),
        );
        // Ended runs' files are byte for byte as the killed process left them.
        for (const [name, text] of ended) expect(fs.readFileSync(path.join(dir, name), 'utf8')).toBe(text);
        // Billed across both processes: within the cap and the documented bound (docs/batches.md, "What a
        // crash costs"): the calls in flight when the cap is reached, and the calls the killed process
        // was billed for but had not written — those in flight, or with group commit the calls of
        // the turns in progress.
        const billed = llm.answered.length * CALL_USD;
        const bound = CONCURRENCY * CALL_USD + CONCURRENCY * (group ? CALLS_PER_TURN : 1) * CALL_USD;
        expect(billed).toBeLessThanOrEqual(CAP_USD + bound + 1e-9);
        // No request of a run that had ended is sent again (by content: the server counts bodies' hashes).
        const endedText = [...ended.values()].join('\n');
        const ofEndedRuns = new Set(llm.answered.filter((a) => endedText.includes(a.mark)).map((a) => a.hash));
        expect(llm.answered.filter((a) => a.phase > 1 && ofEndedRuns.has(a.hash))).toEqual([]);
        // No request whose answer reached the killed process's files is sent again: cut-off runs
        // continue from their journaled responses.
        const all = [...files.values()].join('\n');
        const journaled = new Set(llm.answered.filter((a) => all.includes(a.mark)).map((a) => a.hash));
        expect(llm.answered.filter((a) => a.phase > 1 && journaled.has(a.hash))).toEqual([]);
      } finally {
        await llm.server.close();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});
