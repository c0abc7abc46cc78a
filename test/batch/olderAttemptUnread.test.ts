// An attempt a resume set aside counts in its run's money. One whose lines are not a run's adds
// nothing (it held no money anyone can read); one whose lines could not be read at all (an I/O
// error, a lost connection) fails the resume, naming it: its money is never forgotten without a
// word, and a cap never crossed for it. A reader goes on without it, and may be told.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runBatch } from '../../lib/index';
import { FileStore } from '../../lib/batch/keeping/FileStore';
import { InvalidArgumentError } from '../../lib/machine/InvalidArgumentError';
import { attemptSpends } from '../../lib/history/attemptSpends';
import { storeRunState } from '../../lib/batch/resume/EarlierRuns';
import type { StoreBatch } from '../../lib/batch/keeping/RunStore';
import { THREE_FIGURES, threeFiguresTask } from '../helpers/threeFigures';

let dir: string;
beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-older-unread-'))));
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** The lines of a run cut with its third call in flight, as a store gives them. */
async function cutRunBytes(): Promise<Buffer> {
  await runBatch([threeFiguresTask('t')], { ...THREE_FIGURES, historyDir: dir, logger: false });
  const lines = fs.readFileSync(path.join(dir, 't.jsonl'), 'utf8').split(/(?<=\n)/);
  const reserves = lines.flatMap((l, i) => (l.startsWith('{"type":"reserve"') ? [i] : []));
  return Buffer.from(lines.slice(0, reserves[2]! + 1).join(''));
}

const linesOf = (bytes: Buffer): AsyncIterable<Uint8Array> => ({
  [Symbol.asyncIterator]: async function* () {
    yield bytes;
  },
});

const lost = (): AsyncIterable<Uint8Array> => ({
  [Symbol.asyncIterator]: async function* () {
    yield Buffer.from('');
    throw new Error('connection to 127.0.0.1:5432 lost');
  },
});

it('attemptSpends: an attempt that cannot be read adds nothing, and its reader hears of it, to fail the read if it must', async () => {
  const bytes = await cutRunBytes();
  const garbage = () => linesOf(Buffer.from('not json\n{"also": "not a history line"}\n'));
  const heard: string[] = [];
  const read = await attemptSpends(
    [
      { name: 'attempt 1', input: () => linesOf(bytes) },
      { name: 'attempt 2', input: garbage },
      { name: 'attempt 3', input: lost },
    ],
    { onUnreadable: (name, error) => heard.push(`${name}: ${(error as Error).message}`) },
  );
  expect(read).toHaveLength(2);
  expect(read[0]!.heldUsd).toBeCloseTo(0.01, 10);
  // Read past what is not a history line: nothing spent, nothing held.
  expect(read[1]).toMatchObject({ recordedUsd: 0, liveUsd: 0, heldUsd: 0, ledger: false });
  expect(heard).toEqual([expect.stringMatching(/^attempt 3: .*connection to 127\.0\.0\.1:5432 lost/)]);
  const failing = attemptSpends([{ name: 'attempt 1', input: lost }], {
    onUnreadable: (_name, error) => {
      throw error;
    },
  });
  await expect(failing).rejects.toMatchObject({ code: 'read_failed', file: 'attempt 1' });
});

it("a store's resume fails, naming the attempt, when an attempt set aside cannot be read: its money would be forgotten", async () => {
  const bytes = await cutRunBytes();
  const batch = (older: () => AsyncIterable<Uint8Array>): StoreBatch =>
    ({
      batchId: 'b',
      attempts: (): ReturnType<StoreBatch['attempts']> =>
        Promise.resolve([
          { name: 'run t (live)', input: linesOf(bytes) },
          { name: 'run t (attempt set aside 1)', input: older() },
        ]),
    }) as unknown as StoreBatch;
  // Readable: the older attempt's $0.02 (its 500, its call in flight) counts with the live one's.
  const state = await storeRunState(
    batch(() => linesOf(bytes)),
    't',
    false,
  );
  expect(state.kind).toBe('interrupted');
  expect(state.kind === 'interrupted' && state.usage.costUsd).toBeCloseTo(0.04, 10);
  const failed = storeRunState(batch(lost), 't', false);
  await expect(failed).rejects.toBeInstanceOf(InvalidArgumentError);
  await expect(failed).rejects.toThrow(
    /`resume`.*run t \(attempt set aside 1\): cannot read: connection to 127\.0\.0\.1:5432 lost.*resume again/,
  );
});

it('FileStore lists a run whose file has a damaged line, read past it as the batch readers read it', async () => {
  const store = new FileStore(dir);
  await runBatch([threeFiguresTask('t')], { ...THREE_FIGURES, store, batchId: 'b', logger: false });
  const file = path.join(dir, 'b', 't.jsonl');
  const lines = fs.readFileSync(file, 'utf8').split(/(?<=\n)/);
  lines.splice(2, 0, 'this line is damaged\n');
  fs.writeFileSync(file, lines.join(''));
  const [run] = await store.listRuns({ batchId: 'b' });
  expect(run).toMatchObject({ runId: 't', outcome: 'end_of_turn' });
  expect(run!.costUsd).toBeCloseTo(0.0106, 10);
});
