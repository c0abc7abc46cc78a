// The readers on a large journaled file, as the built executable with stdout a pipe: their
// peak memory (the child's max RSS, reported by the child itself at exit) stays far below the
// file's size, and for `show` and `replay` does not grow with it (a file ten times larger adds
// little), since lines are taken as they are read and let go. Before, `show` peaked at 735 MB on
// this file, and `replay`, which loaded it whole, at 311 MB.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { buildCli } from '../helpers/builtCli';
import { runMeasured, writeLargeRun } from '../helpers/largeRunFile';

const MB = 1024 * 1024;
const FILE_BYTES = 160 * MB;
// The CLI's heap capped well under the file's size: a reader that held the file would run out of it
// (and V8's lazier heap growth on Node 26 does not decide the verdict).
const HEAP = ['--max-old-space-size=64'];

let dir: string;
let file: string;
let small: string;
beforeAll(() => {
  buildCli();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-readers-memory-'));
  file = path.join(dir, 'large.jsonl');
  writeLargeRun(file, FILE_BYTES);
  small = path.join(dir, 'small.jsonl');
  writeLargeRun(small, FILE_BYTES / 10);
}, 120_000);
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('the readers on a 160 MB journaled file (built executable, stdout a pipe)', () => {
  it('show --full prints the whole conversation, its peak RSS independent of the file size', async () => {
    const result = await runMeasured(dir, ['show', '--full', file], HEAP);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    // The whole answer of every turn came out: most of the file.
    expect(result.outBytes).toBeGreaterThan(FILE_BYTES * 0.8);
    const tenth = await runMeasured(dir, ['show', '--full', small], HEAP);
    expect(tenth.code).toBe(0);
    // 144 MB more file, at most 64 MB more memory (the garbage collector's slack, not the file);
    // a reader holding the file would add more than the file.
    expect(result.maxRssBytes - tenth.maxRssBytes).toBeLessThan(64 * MB);
    expect(result.maxRssBytes).toBeLessThan(256 * MB);
  }, 180_000);

  it('replay re-drives every turn from the journal, its peak RSS independent of the file size', async () => {
    const result = await runMeasured(dir, ['replay', file], HEAP);
    expect(result.stderr).toBe('');
    // Every turn re-driven: the file's one LLM call per turn answered, and every move compared. (Exit 1:
    // the file's last move, into WaitingForUserInput after the last turn, is one the adapter never makes.)
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/: ([\d,]+) LLM calls answered from the journal/);
    expect(result.stdout).toMatch(/the moves part at move ([\d,]+) \(recorded \1, replayed [\d,]+\)/);
    const calls = Number(/([\d,]+) LLM calls/.exec(result.stdout)![1]!.replace(/,/g, ''));
    expect(calls).toBeGreaterThan(FILE_BYTES / (9 * 1024));
    const tenth = await runMeasured(dir, ['replay', small], HEAP);
    expect(tenth.code).toBe(1);
    // As for show: 144 MB more file, at most 64 MB more memory; a replay holding the file would add more than the file.
    expect(result.maxRssBytes - tenth.maxRssBytes).toBeLessThan(64 * MB);
    expect(result.maxRssBytes).toBeLessThan(256 * MB);
  }, 180_000);

  it('report writes a page of the first and last moves and none of the journal lines, its peak RSS independent of the file size', async () => {
    // The page keeps the first and the last PAGE_MOVES_KEPT moves (here 77,000 in all, 4 a turn)
    // and says what it left out; the journal, nearly all of the file, is folded as it is read.
    const output = path.join(dir, 'large.html');
    const result = await runMeasured(dir, ['report', file, '-o', output], HEAP);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const html = fs.readFileSync(output, 'utf8');
    expect(html).toContain('more moves than a page keeps');
    const tenth = await runMeasured(dir, ['report', small, '-o', path.join(dir, 'small.html')], HEAP);
    expect(tenth.code).toBe(0);
    // As for show: 144 MB more file, at most 64 MB more memory.
    expect(result.maxRssBytes - tenth.maxRssBytes).toBeLessThan(64 * MB);
    expect(result.maxRssBytes).toBeLessThan(256 * MB);
  }, 180_000);
});
