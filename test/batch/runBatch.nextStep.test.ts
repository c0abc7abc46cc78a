// The errors a person meets between a crash and a resume: each says what to run next.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createScriptedAgent } from '../../lib/agent/createScriptedAgent';
import { runBatch, type BatchTask } from '../../lib/batch/runBatch';
import { lockFolder } from '../../lib/batch/keeping/lockFolder';

const instant = async (): Promise<void> => undefined;

let dir: string;
beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-next-'))));
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

function tasks(n: number): BatchTask[] {
  return Array.from({ length: n }, (_, i) => ({
    id: `t${i}`,
    input: 'go',
    agent: () => createScriptedAgent({ sleep: instant, replies: [{ text: 'done' }] }),
  }));
}

async function messageOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('expected a refusal');
}

/** A hole of NUL bytes over line `n` of `file`, as a power cut leaves one. */
function punchHole(file: string, n: number): void {
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  lines[n - 1] = '\0'.repeat(lines[n - 1]!.length);
  fs.writeFileSync(file, lines.join('\n'));
}

describe('runBatch: errors on the way from a crash to a resume name the next step', () => {
  it('a batch run again into its folder is told to resume first, and only then how to replace it', async () => {
    await runBatch(tasks(3), { historyDir: dir, logger: false });
    const message = await messageOf(runBatch(tasks(3), { historyDir: dir, logger: false }));
    expect(message).toContain(
      'already holds 3 history files this batch would write (t0.jsonl, t1.jsonl, t2.jsonl); to continue that batch (after a crash or a kill), run it again with `resume: true` and the same tasks; to replace it, pass `overwriteHistory: true`',
    );
    expect(message.indexOf('resume: true')).toBeLessThan(message.indexOf('overwriteHistory'));
    // A batch cut off before any run wrote a file: its manifest alone.
    for (const file of ['t0.jsonl', 't1.jsonl', 't2.jsonl']) fs.rmSync(path.join(dir, file));
    expect(await messageOf(runBatch(tasks(2), { historyDir: dir, logger: false }))).toContain(
      'already holds a batch (batch.json); to continue that batch (after a crash or a kill), run it again with `resume: true`',
    );
  });

  it('files without a manifest are not offered to resume', async () => {
    await runBatch(tasks(1), { historyDir: dir, logger: false });
    fs.rmSync(path.join(dir, 'batch.json'));
    const message = await messageOf(runBatch(tasks(1), { historyDir: dir, logger: false }));
    expect(message).toContain('they are not of a batch that can be resumed (no batch.json); to replace them, pass');
    expect(message).not.toContain('resume: true');
  });

  it("resume's refusals say what to do instead", async () => {
    expect(await messageOf(runBatch(tasks(2), { historyDir: dir, resume: true, logger: false }))).toContain(
      `${dir} has none: to start this batch there, leave out \`resume\``,
    );
    await runBatch(tasks(2), { historyDir: dir, logger: false });
    expect(await messageOf(runBatch(tasks(3), { historyDir: dir, resume: true, logger: false }))).toContain(
      '(it lists 2 tasks, this batch has 3): pass the tasks that batch ran (its batch.json lists their ids, in order), or, to start this batch instead, leave out `resume` and give another `historyDir`',
    );
  });

  it('a NUL hole in an ended run names the file, the line, and the ways on that runBatch has', async () => {
    await runBatch(tasks(2), { historyDir: dir, logger: false });
    const file = path.join(dir, 't1.jsonl');
    punchHole(file, 3);
    const message = await messageOf(runBatch(tasks(2), { historyDir: dir, resume: true, logger: false }));
    expect(message).toContain(`${file}:3: corrupt line`);
    expect(message).toContain(`See what is left of it with \`npx agent-sm inspect ${file} --salvage\``);
    expect(message).toContain(
      'to run its task again from the beginning, move the file out of the folder and resume again',
    );
  });

  it('a folder held by a live batch says to wait, then resume', async () => {
    await runBatch(tasks(1), { historyDir: dir, logger: false });
    const lock = lockFolder(dir, 'the first batch');
    try {
      expect(await messageOf(runBatch(tasks(1), { historyDir: dir, resume: true, logger: false }))).toMatch(
        /is in use by batch the first batch .*Wait for it to end, then, to finish what it left, run this batch again with `resume: true`; or give this batch another `historyDir`$/,
      );
    } finally {
      lock.release();
    }
  });
});
