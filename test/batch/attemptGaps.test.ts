// An attempt set aside by a resume that was deleted by hand leaves a gap in the numbers
// (`<file>.interrupted.2` with no `<file>.interrupted`). The attempts after the gap are still the
// run's: a resume serves their journal (the calls it holds are not paid for again) and counts
// their spend, and the attempt it sets aside next is numbered after them, so the order of the
// numbers stays the order the attempts were made. On a folder and on a FileStore alike.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runBatch, type Pricing } from '../../lib/index';
import { readBatchFolder } from '../../lib/batch/reading/readBatchFolder';
import { FileStore } from '../../lib/subpaths/batch';
import { threeCallTask } from '../helpers/threeCallTask';

/** $1 a million tokens, in or out: each call $0.002. */
const pricing: Pricing = (u) => ((u.inputTokens ?? 0) + (u.outputTokens ?? 0)) * 1e-6;
const usage = { inputTokens: 1000, outputTokens: 1000 };

let root: string;
beforeEach(() => (root = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-gaps-'))));
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

/** The lines of `text` up to and with its `n`th line of `type`. */
function cutAfter(text: string, type: string, n: number): string {
  const lines = text.split(/(?<=\n)/);
  const at = lines.flatMap((l, i) => (l.includes(`"type":"${type}"`) ? [i] : []))[n - 1]!;
  return lines.slice(0, at + 1).join('');
}

const where = {
  folder: () => ({ dir: root, options: { historyDir: root } }),
  FileStore: () => ({ dir: path.join(root, 'b'), options: { store: new FileStore(root), batchId: 'b' } }),
};

it.each(Object.keys(where) as Array<keyof typeof where>)(
  '%s: a resume reads the attempts after a gap in their numbers, and numbers the next after them',
  async (kind) => {
    const { dir, options } = where[kind]();
    const run = { ...options, logger: false, pricing } as const;
    const whole = await runBatch(threeCallTask(usage), run);
    expect(whole.runs[0]!.usage.costUsd).toBeCloseTo(0.006, 10);
    const file = path.join(dir, 't.jsonl');
    const ended = fs.readFileSync(file, 'utf8');
    // The second attempt got two answers, then was killed; the third was killed before it wrote
    // any of them again; the first was deleted by hand.
    fs.writeFileSync(`${file}.interrupted.2`, cutAfter(ended, 'llm', 2));
    fs.writeFileSync(file, cutAfter(ended, 'reserve', 1).replace(/\n[^\n]*\n$/, '\n'));

    const resumed = await runBatch(threeCallTask(usage), { ...run, resume: true });
    const report = resumed.runs[0]!;
    expect(report).toMatchObject({ outcome: 'end_of_turn', resumed: 'recovered' });
    // Served the two answers the attempt after the gap holds: one call made, not three.
    expect(report.resume?.recordedCalls).toBe(2);
    const answers = fs
      .readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('{"type":"llm"'));
    expect(answers.map((l) => l.includes('"fromJournal":true'))).toEqual([true, true, false]);
    expect(report.usage.costUsd).toBeCloseTo(0.006, 10);
    // The cut third attempt is numbered after the second, not in the gap before it.
    expect(
      fs
        .readdirSync(dir)
        .filter((n) => n.startsWith('t.jsonl.'))
        .sort(),
    ).toEqual(['t.jsonl.interrupted.2', 't.jsonl.interrupted.3']);
    const read = await readBatchFolder(dir, { onWarning: () => undefined });
    expect(read.runs[0]!.interrupted.map((n) => path.basename(n))).toEqual([
      't.jsonl.interrupted.2',
      't.jsonl.interrupted.3',
    ]);
    expect(read.runs[0]!.costUsd).toBeCloseTo(0.006, 10);
  },
);

it.each(Object.keys(where) as Array<keyof typeof where>)(
  '%s: a run whose only attempt left is after a gap, with no file after it, is cut off and continued',
  async (kind) => {
    const { dir, options } = where[kind]();
    const run = { ...options, logger: false, pricing } as const;
    await runBatch(threeCallTask(usage), run);
    const file = path.join(dir, 't.jsonl');
    // Its second attempt got two answers and was set aside by a resume killed before the next
    // attempt wrote its file; the first was deleted by hand.
    fs.writeFileSync(`${file}.interrupted.2`, cutAfter(fs.readFileSync(file, 'utf8'), 'llm', 2));
    fs.rmSync(file);

    const resumed = await runBatch(threeCallTask(usage), { ...run, resume: true });
    expect(resumed.runs[0]).toMatchObject({ outcome: 'end_of_turn', resumed: 'recovered' });
    expect(resumed.runs[0]!.resume?.recordedCalls).toBe(2);
    expect(resumed.runs[0]!.usage.costUsd).toBeCloseTo(0.006, 10);
    expect(fs.readdirSync(dir).filter((n) => n.startsWith('t.jsonl.'))).toEqual(['t.jsonl.interrupted.2']);
  },
);
