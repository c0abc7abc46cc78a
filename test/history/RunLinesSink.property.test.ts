import fc from 'fast-check';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { JsonlHistorySink } from '../../lib/history/JsonlHistorySink';
import type { HistoryDurability } from '../../lib/history/JsonlHistorySinkOptions';
import { RunLinesSink, type RunLineWriter } from '../../lib/history/RunLinesSink';
import { StateMachine } from '../../lib/machine/StateMachine';

/** One step of a run: a move along the table's loop, a journal line, or the ledger's reserve line. */
type Step = 'move' | 'llm' | 'reserve';
/** A cycle the sixteen-state table allows, ending a turn at EndOfTurn. */
const LOOP = ['WaitingForUserInput', 'SendingToLLM', 'ProcessingLLMResponse', 'EndOfTurn'] as const;

/** Drives `machine` through `steps`; returns the reserve lines' commits, in order. */
function drive(machine: StateMachine, steps: readonly Step[]): Array<PromiseLike<void> | undefined> {
  const commits: Array<PromiseLike<void> | undefined> = [];
  let at = 0;
  steps.forEach((step, i) => {
    if (step === 'move') machine.transition(LOOP[at++ % LOOP.length]!, { description: `move ${i}`, data: { i } });
    else if (step === 'llm') machine.journal({ type: 'llm', turn: 1, attempt: i } as never);
    else commits.push(machine.journalCommit({ type: 'reserve', turn: 1, attempt: i, at: i } as never));
  });
  return commits;
}

const durabilities: HistoryDurability[] = ['none', 'turn', 'move'];

describe('RunLinesSink (property)', () => {
  it("keeps the file sink's lines, and resolves each reserve only once it and every line before it are durably committed", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-runlines-prop-'));
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.constantFrom<Step>('move', 'move', 'llm', 'reserve'), { maxLength: 40 }),
          fc.constantFrom(...durabilities),
          fc.option(fc.integer({ min: 1, max: 6 }), { nil: undefined }),
          fc.array(fc.nat(3), { minLength: 1, maxLength: 10 }),
          async (steps, durability, maxLines, delays) => {
            const file = path.join(dir, 'run.jsonl');
            let t = 0;
            const onFile = JsonlHistorySink.open(file, { runId: 'r', startedAt: 1, overwrite: true, durability });
            drive(new StateMachine({ logger: false, clock: () => ++t, sink: onFile }), steps);
            onFile.close();

            // Commits settle after a few turns of the event loop each, as a server's answers do.
            const kept: string[] = [];
            let durableUpTo = 0;
            let n = 0;
            const writer: RunLineWriter = {
              append: async (lines, durable) => {
                for (let i = delays[n++ % delays.length]!; i > 0; i--) await new Promise((r) => setImmediate(r));
                kept.push(...lines);
                if (durable) durableUpTo = kept.length;
              },
              end: () => Promise.resolve(),
            };
            t = 0;
            const sink = await RunLinesSink.open('store run r', writer, {
              runId: 'r',
              startedAt: 1,
              durability,
              ...(maxLines === undefined ? {} : { groupCommit: { maxLines, maxDelayMs: 60_000 } }),
            });
            const commits = drive(new StateMachine({ logger: false, clock: () => ++t, sink }), steps);
            // Each reserve, once its commit resolves: it and everything before it are kept, durably.
            let reserves = 0;
            for (const commit of commits) {
              expect(commit).toBeDefined();
              await commit;
              reserves += 1;
              const upTo = kept.slice(0, durableUpTo);
              expect(upTo.filter((l) => l.includes('"type":"reserve"'))).toHaveLength(reserves);
            }
            await sink.close();
            expect(kept.map((l) => `${l}\n`).join('')).toBe(fs.readFileSync(file, 'utf8'));
          },
        ),
        { numRuns: 150 },
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
