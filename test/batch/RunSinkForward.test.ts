import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { RunSinkForward } from '../../lib/batch/tasks/RunSinkForward';
import { readRunFile, type RunFileFacts } from '../../lib/history/readRunFile';
import type { JournalLine } from '../../lib/machine/HistorySink';
import type { TransitionRecord } from '../../lib/machine/TransitionRecord';
import type { TransitionTable } from '../../lib/machine/TransitionTable';
import { DEFAULT_TABLE } from '../../lib/machine/transitions';

const TABLE = DEFAULT_TABLE as TransitionTable<string>;

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-forward-'));
});
afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

/** What a run's machine and adapter hand its sink: a move, a ledger or journal line, a reset. */
type Step =
  | { kind: 'move'; to: string; usage: number | undefined; outcome: boolean }
  | { kind: 'reserve'; attempt: number; maxCostUsd: number | undefined }
  | { kind: 'llm'; attempt: number; costUsd: number | undefined }
  | { kind: 'tool' }
  | { kind: 'reset' };

// Idle, working, terminal and error states: turns open, end well, end badly, or are left open.
const STATES = ['WaitingForUserInput', 'SendingToLLM', 'RunningTool', 'EndOfTurn', 'Error', 'BudgetExceeded'];
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    kind: fc.constant('move' as const),
    to: fc.constantFrom(...STATES),
    usage: fc.option(fc.integer({ min: 0, max: 50 }), { nil: undefined }),
    outcome: fc.boolean(),
  }),
  fc.record({
    kind: fc.constant('reserve' as const),
    attempt: fc.integer({ min: 1, max: 2 }),
    maxCostUsd: fc.option(fc.integer({ min: 0, max: 9 }), { nil: undefined }),
  }),
  fc.record({
    kind: fc.constant('llm' as const),
    attempt: fc.integer({ min: 1, max: 2 }),
    costUsd: fc.option(fc.integer({ min: 0, max: 9 }), { nil: undefined }),
  }),
  fc.constant({ kind: 'tool' as const }),
  fc.constant({ kind: 'reset' as const }),
);

/** Hands `steps` to `forward` as a run would, and returns the facts it tells once its file closed. */
function feed(forward: RunSinkForward, file: string, steps: readonly Step[]): RunFileFacts {
  let told: RunFileFacts | undefined;
  const sink = forward.openFile(TABLE, file, {
    historyOptions: { durability: 'none', runId: 'r', startedAt: 1_000 },
    onRunFacts: (facts, name) => {
      expect(name).toBe(file);
      told = facts;
    },
  });
  let seq = 0;
  let from = TABLE.initial;
  let at = 1_000;
  let turn = 1;
  for (const s of steps) {
    at += 7;
    if (s.kind === 'move') {
      seq += 1;
      const data =
        s.usage === undefined
          ? undefined
          : {
              usage: { inputTokens: s.usage, outputTokens: 1, costUsd: s.usage / 100, llmCalls: seq, toolCalls: 0 },
              ...(s.outcome ? { outcome: s.to === 'Error' ? 'error' : 'end_of_turn' } : {}),
            };
      const record: TransitionRecord<string> = {
        seq,
        from,
        to: s.to,
        description: `to ${s.to}`,
        at,
        durationMs: 3,
        forced: false,
        ...(data === undefined ? {} : { data }),
      };
      forward.write(record);
      from = s.to;
      if (s.to === 'EndOfTurn' || s.to === 'Error') turn += 1;
    } else if (s.kind === 'reset') {
      forward.reset({ from, at, seq });
      from = TABLE.initial;
    } else {
      const line: JournalLine & Record<string, unknown> =
        s.kind === 'tool'
          ? { type: 'tool', turn, call: { id: 'c1', name: 'bash' }, status: 'ok', startedAt: at, endedAt: at }
          : s.kind === 'reserve'
            ? {
                type: 'reserve',
                turn,
                operation: 'sendUserMessage',
                attempt: s.attempt,
                at,
                ...(s.maxCostUsd === undefined ? {} : { maxCostUsd: s.maxCostUsd / 10 }),
              }
            : {
                type: 'llm',
                turn,
                operation: 'sendUserMessage',
                attempt: s.attempt,
                startedAt: at,
                endedAt: at,
                ...(s.costUsd === undefined ? {} : { costUsd: s.costUsd / 10 }),
              };
      forward.journal(line);
    }
  }
  sink.close();
  forward.tellFacts();
  return told!;
}

describe('RunSinkForward', () => {
  it('tells what reading its file back says, learned from the moves, journal lines and resets it passed on (property)', async () => {
    let round = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 40 }), async (steps) => {
        const file = path.join(dir, `run-${round++}.jsonl`);
        const told = feed(new RunSinkForward(), file, steps);
        expect(told).toEqual(await readRunFile(file, { onWarning: () => undefined }));
      }),
      { numRuns: 200, seed: 40 },
    );
  });

  it('tells nothing when no one asked for the facts, and passes the lines on all the same', () => {
    const file = path.join(dir, 'unasked.jsonl');
    const forward = new RunSinkForward();
    const sink = forward.openFile(TABLE, file, { historyOptions: { durability: 'none' } });
    forward.write({
      seq: 1,
      from: 'Ready',
      to: 'WaitingForUserInput',
      description: 'x',
      at: 1,
      durationMs: 0,
      forced: false,
    });
    sink.close();
    forward.tellFacts();
    expect(
      fs
        .readFileSync(file, 'utf8')
        .split('\n')
        .filter((l) => l !== ''),
    ).toHaveLength(2);
  });
});
