import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { HistoryFileError } from '../../lib/history/HistoryFileError';
import { JsonlHistorySink } from '../../lib/history/JsonlHistorySink';
import type { HistoryDurability } from '../../lib/history/JsonlHistorySinkOptions';
import { RunLinesSink, type RunLineWriter } from '../../lib/history/RunLinesSink';
import { StateMachine } from '../../lib/machine/StateMachine';

/** A store's writer that keeps each commit: its lines and whether it was durable. */
function recorder(fail?: (commit: number) => boolean): RunLineWriter & {
  commits: Array<{ lines: string[]; durable: boolean }>;
  ended: number;
} {
  const commits: Array<{ lines: string[]; durable: boolean }> = [];
  const writer = {
    commits,
    ended: 0,
    append: (lines: readonly string[], durable: boolean): Promise<void> => {
      if (fail?.(commits.length + 1) === true) return Promise.reject(new Error('server gone'));
      commits.push({ lines: [...lines], durable });
      return Promise.resolve();
    },
    end: (): Promise<void> => {
      writer.ended += 1;
      return Promise.resolve();
    },
  };
  return writer;
}

/** A turn with the ledger's line before its call: Ready → … → EndOfTurn, then a second turn's first move. */
function run(machine: StateMachine): Array<PromiseLike<void> | undefined> {
  const commits: Array<PromiseLike<void> | undefined> = [];
  machine.transition('WaitingForUserInput', 'user');
  machine.transition('SendingToLLM', 'send');
  commits.push(
    machine.journalCommit({ type: 'reserve', turn: 1, operation: 'sendUserMessage', attempt: 1, at: 1 } as never),
  );
  machine.journal({ type: 'llm', turn: 1, attempt: 1 } as never);
  machine.transition('ProcessingLLMResponse', 'reply');
  machine.transition('EndOfTurn', 'done');
  machine.reset();
  machine.transition('WaitingForUserInput', 'again');
  return commits;
}

const typeOf = (line: string): string => {
  const parsed = JSON.parse(line) as { type?: string; to?: string };
  return parsed.type ?? `move:${parsed.to}`;
};

describe('RunLinesSink', () => {
  it("writes the very lines a JsonlHistorySink writes, the reserve line's commit returned", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-runlines-'));
    try {
      const file = path.join(dir, 'run.jsonl');
      let t = 1000;
      const onFile = JsonlHistorySink.open(file, { runId: 'r', startedAt: 5, metadata: { k: 'é' } });
      run(new StateMachine({ logger: false, clock: () => ++t, sink: onFile }));
      onFile.close();
      t = 1000;
      const writer = recorder();
      const sink = await RunLinesSink.open('store run r', writer, { runId: 'r', startedAt: 5, metadata: { k: 'é' } });
      const commits = run(new StateMachine({ logger: false, clock: () => ++t, sink }));
      expect(commits[0]).toBeInstanceOf(Promise);
      await sink.close();
      const kept = writer.commits.flatMap((c) => c.lines.map((l) => `${l}\n`)).join('');
      expect(kept).toBe(fs.readFileSync(file, 'utf8'));
      expect(writer.ended).toBe(1);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  // What each commit holds and whether it waits for the disk, mode by mode: the meaning the file's modes have.
  it.each<[HistoryDurability, boolean, Array<[string[], boolean]>]>([
    [
      'move',
      false,
      [
        [['meta'], true],
        [['move:WaitingForUserInput'], true],
        [['move:SendingToLLM'], true],
        [['reserve'], true],
        [['llm'], true],
        [['move:ProcessingLLMResponse'], true],
        [['move:EndOfTurn'], true],
        [['reset'], true],
        [['move:WaitingForUserInput'], true],
      ],
    ],
    [
      'turn',
      false,
      [
        [['meta'], false],
        [['move:WaitingForUserInput'], false],
        [['move:SendingToLLM'], false],
        [['reserve'], true],
        [['llm'], false],
        [['move:ProcessingLLMResponse'], false],
        [['move:EndOfTurn'], true],
        [['reset'], false],
        [['move:WaitingForUserInput'], false],
      ],
    ],
    [
      'turn',
      true,
      [
        [['meta'], false],
        [['move:WaitingForUserInput', 'move:SendingToLLM', 'reserve'], true],
        [['llm', 'move:ProcessingLLMResponse', 'move:EndOfTurn'], true],
        // close(): what waits is committed, durably.
        [['reset', 'move:WaitingForUserInput'], true],
      ],
    ],
    [
      'none',
      true,
      [
        [['meta'], false],
        // Only the ledger's line waits for the disk, with the lines before it.
        [['move:WaitingForUserInput', 'move:SendingToLLM', 'reserve'], true],
        [['llm', 'move:ProcessingLLMResponse', 'move:EndOfTurn'], false],
        [['reset', 'move:WaitingForUserInput'], false],
      ],
    ],
  ])(
    'durability %s (group commit %s) commits as the file is written and synced',
    async (durability, group, expected) => {
      const writer = recorder();
      const sink = await RunLinesSink.open('store run r', writer, {
        runId: 'r',
        durability,
        ...(group ? { groupCommit: { maxLines: 100, maxDelayMs: 60_000 } } : {}),
      });
      run(new StateMachine({ logger: false, sink }));
      await sink.close();
      expect(writer.commits.map((c) => [c.lines.map(typeOf), c.durable])).toEqual(expected);
    },
  );

  it('stops at the first failed commit: no later line is kept, the reserve rejects, the machine and close() report it', async () => {
    // The third commit (the second move) fails: the server went away.
    const writer = recorder((n) => n === 3);
    const sink = await RunLinesSink.open('store run r', writer, { runId: 'r', durability: 'move' });
    const errors: unknown[] = [];
    const machine = new StateMachine({ logger: false, sink });
    machine.on('sinkError', ({ error }) => errors.push(error));
    machine.transition('WaitingForUserInput', 'user');
    machine.transition('SendingToLLM', 'send');
    const reserve = machine.journalCommit({ type: 'reserve' } as never);
    await expect(reserve).rejects.toThrow(HistoryFileError);
    await expect(reserve).rejects.toThrow(/store run r: cannot keep a line: server gone/);
    machine.transition('ProcessingLLMResponse', 'reply');
    await expect(sink.close()).rejects.toThrow(/server gone/);
    // Kept: the meta line and the first move; nothing after the gap.
    expect(writer.commits.map((c) => c.lines.map(typeOf))).toEqual([['meta'], ['move:WaitingForUserInput']]);
    expect(writer.ended).toBe(0);
    expect(errors.length).toBeGreaterThanOrEqual(1);
    expect(errors.every((e) => e instanceof HistoryFileError)).toBe(true);
  });
});
