// The two sides of the durable suite's continue line (bench/folderContinue.ts), and the floor
// without its journal's lines: a run kept in a history folder, cut off after 50 journaled calls,
// continued with `runBatch(task, { historyDir, resume: true })`, against reading and parsing the
// cut file plus the same run served from memory, its moves and journal lines written. The suite
// times them in process; bench/folderContinueChild.ts runs them under callgrind.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Library } from './library';
import { CONTINUE_CALLS, longTask } from './longTask';

export { CONTINUE_CALLS } from './longTask';

/** What the suites and the child need of the library. */
export type ContinueLibrary = Pick<Library, 'runBatch' | 'createScriptedAgent'>;

/** The continued run, its floor, and the floor without the journal's lines (for reference). */
export type ContinueSide = 'continued' | 'floor' | 'movesOnly';

/** Wall and CPU time of one sample, in ns. */
export interface Timed {
  wall: number;
  cpu: number;
}

/** Times `work`: wall time, and this process's CPU time (user + system; a fsync's wait on the disk is not in it). */
async function timed(work: () => Promise<void>): Promise<Timed> {
  const cpu0 = process.cpuUsage();
  const wall0 = process.hrtime.bigint();
  await work();
  const wall = Number(process.hrtime.bigint() - wall0);
  const cpu = process.cpuUsage(cpu0);
  return { wall, cpu: (cpu.user + cpu.system) * 1000 };
}

/**
 * The long task run into a folder of `dir` and cut off after its `CONTINUE_CALLS` journaled
 * calls, before the reserve line of its last call: what a kill leaves. Returns a function that
 * runs `side` `count` times, each in a fresh folder of `dir` (the copies made before the clock
 * starts, removed after it stops), and times them.
 */
export async function continueSides(
  lib: ContinueLibrary,
  dir: string,
): Promise<(side: ContinueSide, count: number) => Promise<Timed>> {
  const cutDir = path.join(dir, 'cut');
  await lib.runBatch(longTask(lib), { historyDir: cutDir, logger: false, historyDurability: 'none' });
  const all = fs.readFileSync(path.join(cutDir, 'long.jsonl'), 'utf8').split('\n');
  let reserves = 0;
  const at = all.findIndex((l) => l.startsWith('{"type":"reserve"') && ++reserves > CONTINUE_CALLS);
  if (at === -1) throw new Error('the long run wrote fewer reserve lines than it made calls');
  fs.writeFileSync(path.join(cutDir, 'long.jsonl'), `${all.slice(0, at).join('\n')}\n`);
  const cut = new Map(fs.readdirSync(cutDir).map((f) => [f, fs.readFileSync(path.join(cutDir, f))]));
  fs.rmSync(cutDir, { recursive: true, force: true });
  const lines = cut.get('long.jsonl')!.toString('utf8').split('\n');
  const journal = lines.filter((l) => /^\{"type":"(llm|tool|reserve)"/.test(l)).map((l) => `${l}\n`);
  let made = 0;

  const served = async (folder: string, withJournal: boolean): Promise<void> => {
    for (const line of lines) if (line !== '') JSON.parse(line);
    await lib.runBatch(longTask(lib), {
      historyDir: folder,
      logger: false,
      historyDurability: 'none',
      journal: false,
      ledger: false,
    });
    if (!withJournal) return;
    const fd = fs.openSync(path.join(folder, 'journal.jsonl'), 'a');
    for (const line of journal) fs.writeSync(fd, line);
    fs.closeSync(fd);
  };
  const continued = async (folder: string): Promise<void> => {
    const report = await lib.runBatch(longTask(lib), {
      historyDir: folder,
      logger: false,
      historyDurability: 'none',
      resume: true,
    });
    const recorded = report.runs[0]!.resume?.recordedCalls;
    if (report.runs[0]!.resumed !== 'recovered' || recorded !== CONTINUE_CALLS)
      throw new Error(
        `the cut-off run did not continue from its ${CONTINUE_CALLS} journaled calls (served ${recorded})`,
      );
  };

  return async (side, count) => {
    const folders = Array.from({ length: count }, () => path.join(dir, `${side}-${made++}`));
    if (side === 'continued')
      for (const folder of folders) {
        fs.mkdirSync(folder);
        for (const [name, bytes] of cut) fs.writeFileSync(path.join(folder, name), bytes);
      }
    try {
      return await timed(async () => {
        for (const folder of folders)
          await (side === 'continued' ? continued(folder) : served(folder, side === 'floor'));
      });
    } finally {
      for (const folder of folders) fs.rmSync(folder, { recursive: true, force: true });
    }
  };
}
