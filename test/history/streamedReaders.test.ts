import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { loadHistory, readHistory, runFacts, summarizeHistory, validateHistory } from '../../lib/subpaths/history';
import { InvalidArgumentError } from '../../lib/machine/InvalidArgumentError';
import type { HistoryItem } from '../../lib/history/HistoryEntry';
import { JsonlHistorySink } from '../../lib/history/JsonlHistorySink';
import { FAILING_TURN, scriptedMachine, TOOL_TURN } from '../fixtures/agentRun';

// validateHistory, summarizeHistory and runFacts are each one function for a history in memory
// and for one streamed from its file (`readHistory`): the streamed form resolves with what the
// same items held in memory give.

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'streamed-readers-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A history file of `turns` turns, each a tool turn or a failing one, cut off when `cut` is set. */
function writeRun(name: string, turns: boolean[], cut: boolean): string {
  const file = path.join(dir, name);
  const sink = JsonlHistorySink.open(file, { runId: name });
  const run = scriptedMachine(sink);
  run.play([['WaitingForUserInput', 'session starts', 5]]);
  for (const good of turns) {
    run.play(good ? TOOL_TURN : FAILING_TURN);
    if (!good) run.play([['WaitingForUserInput', 'retry', 1]]);
  }
  if (cut) run.play([['SendingToLLM', 'cut here', 3]]);
  sink.close();
  return file;
}

async function* from(items: HistoryItem[]): AsyncGenerator<HistoryItem> {
  for (const item of items) yield item;
}

describe('the history readers, given a stream', () => {
  it('give for a streamed file what they give for the same file loaded whole', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(fc.boolean(), { maxLength: 6 }), fc.boolean(), async (turns, cut) => {
        const file = writeRun(`run-${n++}.jsonl`, turns, cut);
        const { entries } = await loadHistory(file);
        expect(await validateHistory(readHistory(file))).toEqual(validateHistory(entries));
        expect(await summarizeHistory(readHistory(file), { lastMoves: 2 })).toEqual(
          summarizeHistory(entries, { lastMoves: 2 }),
        );
        expect(await runFacts(readHistory(file))).toEqual(runFacts(entries));
        expect(await runFacts(readHistory(file), { retain: false })).toEqual(runFacts(entries, { retain: false }));
      }),
      { numRuns: 25 },
    );
  });

  it('reject an item that is not a record or an entry, naming where it is', async () => {
    const { entries } = await loadHistory(writeRun('bad.jsonl', [true], false));
    const items = [...entries.slice(0, 3), 42 as unknown as HistoryItem];
    const readers = [validateHistory, summarizeHistory, runFacts] as ((
      i: AsyncIterable<HistoryItem>,
    ) => Promise<unknown>)[];
    for (const read of readers) {
      const error = await read(from(items)).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect((error as Error).message).toMatch(/items\[3\]/);
    }
  });

  it('still refuse what is neither iterable nor async iterable, at once', () => {
    expect(() => validateHistory(42 as unknown as HistoryItem[])).toThrow(InvalidArgumentError);
    expect(() => summarizeHistory({} as unknown as HistoryItem[])).toThrow(InvalidArgumentError);
    expect(() => runFacts(null as unknown as HistoryItem[])).toThrow(InvalidArgumentError);
  });
});
