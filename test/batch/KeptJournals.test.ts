// A cut-off run's journal is read with its state, in the one pass a resume makes over its lines
// (a folder's file, a store's), and served from there when the run continues, as long as the
// lines are what was read.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createScriptedAgent, type ScriptedReply } from '../../lib/agent/createScriptedAgent';
import type { RecordedLine } from '../../lib/agent/journal/RunRecording';
import { FileStore } from '../../lib/batch/keeping/FileStore';
import type { StoreBatch } from '../../lib/batch/keeping/RunStore';
import { storeRunJournal, storeRunState } from '../../lib/batch/resume/EarlierRuns';
import { KeptJournals, unchangedSince } from '../../lib/batch/resume/KeptJournals';
import { runBatch, type BatchOptions, type BatchTask } from '../../lib/batch/runBatch';
import * as loadHistoryModule from '../../lib/history/loadHistory';

const instant = async (): Promise<void> => undefined;
const USAGE = { inputTokens: 100, outputTokens: 10, costUsd: 0.01 };
const CALLS = 6;

let dir: string;
beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-kept-'))));
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** One task of CALLS tool rounds, then an answer. */
function longTask(): BatchTask[] {
  const replies: ScriptedReply[] = Array.from({ length: CALLS }, (_, i) => ({
    toolCalls: [{ id: `c${i}`, name: 'read' }],
    usage: USAGE,
  }));
  replies.push({ text: 'done', usage: USAGE });
  return [
    {
      id: 'long',
      input: 'go',
      agent: () => createScriptedAgent({ replies, tools: { read: { output: 'text' } }, sleep: instant }),
    },
  ];
}

/** The long task's folder, its file cut before the reserve line of its last call: what a kill leaves. */
async function cutOffFolder(): Promise<string> {
  await runBatch(longTask(), { historyDir: dir, logger: false, historyDurability: 'none' });
  return cutOff(path.join(dir, 'long.jsonl'));
}

/** `file` (a long task's run) cut before the reserve line of its last call. */
function cutOff(file: string): string {
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  let reserves = 0;
  const cut = lines.findIndex((l) => l.startsWith('{"type":"reserve"') && ++reserves === CALLS + 1);
  fs.writeFileSync(file, `${lines.slice(0, cut).join('\n')}\n`);
  return file;
}

const LINES: RecordedLine[] = [{ type: 'llm', turn: 1 }];

/** Keeps LINES as a folder's resume does: as the journal of `file`, read at `stat`. */
const keepFile = (kept: KeptJournals, file: string, stat: fs.Stats): void =>
  kept.keep(file, stat.size, LINES, unchangedSince(file, stat));

describe('KeptJournals', () => {
  // Where the cut-off run is kept, and the batch options that resume it there.
  const keepings: Array<[string, () => Promise<{ file: string; options: BatchOptions }>]> = [
    [
      'a folder',
      async () => ({ file: await cutOffFolder(), options: { historyDir: dir, logger: false, resume: true } }),
    ],
    [
      'a store',
      async () => {
        const store = new FileStore(dir);
        await runBatch(longTask(), { store, batchId: 'b', logger: false, historyDurability: 'none' });
        const file = cutOff(path.join(dir, 'b', 'long.jsonl'));
        return { file, options: { store, batchId: 'b', logger: false, resume: true } };
      },
    ],
  ];

  it.each(keepings)(
    'reads a cut-off run’s lines once when its batch resumes from %s: its state and the journal it continues from',
    async (_, keep) => {
      const { file, options } = await keep();
      const reads = jest.spyOn(loadHistoryModule, 'readHistoryInto');
      try {
        const report = await runBatch(longTask(), options);
        expect(report.runs[0]).toMatchObject({ outcome: 'end_of_turn', resumed: 'recovered' });
        expect(report.runs[0]!.resume?.recordedCalls).toBe(CALLS);
        expect(reads.mock.calls.filter(([name]) => name === file)).toHaveLength(1);
      } finally {
        reads.mockRestore();
      }
    },
  );

  it('on a store, gives up a journal whose lines outgrow the room as they are read: the run is read again, to the same journal', async () => {
    const file = await cutOffFolder();
    // A store batch's attempts, as FileStore gives them: lines with no size before they are read.
    const batch = {
      attempts: () => Promise.resolve([{ name: file, input: fs.createReadStream(file) }]),
    } as unknown as StoreBatch;
    const reads = jest.spyOn(loadHistoryModule, 'readHistoryInto');
    try {
      const roomy = new KeptJournals();
      expect(await storeRunState(batch, 'long', false, roomy)).toMatchObject({ kind: 'interrupted' });
      const journal = await storeRunJournal(batch, 'long', false, roomy);
      expect(journal.filter((l) => l.type === 'llm')).toHaveLength(CALLS);
      expect(reads).toHaveBeenCalledTimes(1);

      const tight = new KeptJournals(fs.statSync(file).size - 1);
      expect(await storeRunState(batch, 'long', false, tight)).toMatchObject({ kind: 'interrupted' });
      expect(await storeRunJournal(batch, 'long', false, tight)).toEqual(journal);
      expect(reads).toHaveBeenCalledTimes(3);
      expect(tight.fits(fs.statSync(file).size - 1)).toBe(true); // nothing of it held
    } finally {
      reads.mockRestore();
    }
  });

  it('gives a journal up once, and only while its file has the size and mtime it had before the read', () => {
    const file = path.join(dir, 'run.jsonl');
    fs.writeFileSync(file, 'line\n');
    const kept = new KeptJournals();
    keepFile(kept, file, fs.statSync(file));
    expect(kept.take(file)).toBe(LINES);
    expect(kept.take(file)).toBeUndefined();

    keepFile(kept, file, fs.statSync(file));
    fs.appendFileSync(file, 'more\n'); // written after it was read: read it again
    expect(kept.take(file)).toBeUndefined();

    const stat = fs.statSync(file);
    keepFile(kept, file, stat);
    fs.utimesSync(file, new Date(), new Date(stat.mtimeMs + 5_000)); // same size, written again
    expect(kept.take(file)).toBeUndefined();

    keepFile(kept, file, fs.statSync(file));
    fs.rmSync(file);
    expect(kept.take(file)).toBeUndefined();
  });

  it('keeps the journals of 32 MiB of files at most, and has room again as they are taken', () => {
    const file = path.join(dir, 'run.jsonl');
    fs.writeFileSync(file, 'line\n');
    const real = fs.statSync(file);
    const big = { size: 24 * 1024 * 1024, mtimeMs: real.mtimeMs } as fs.Stats;
    const kept = new KeptJournals();
    expect(kept.fits(32 * 1024 * 1024)).toBe(true);
    expect(kept.fits(32 * 1024 * 1024 + 1)).toBe(false);
    keepFile(kept, file, big);
    expect(kept.fits(8 * 1024 * 1024)).toBe(true);
    expect(kept.fits(8 * 1024 * 1024 + 1)).toBe(false);
    expect(kept.take(file)).toBeUndefined(); // its size is not the file's
    expect(kept.fits(32 * 1024 * 1024)).toBe(true);
  });
});
