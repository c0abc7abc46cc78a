// The readers on a large journaled file, as the built executable with stdout a pipe: their
// peak memory (the child's max RSS, reported by the child itself at exit) stays under a bound
// far below the file's size, since lines are taken as they are read and let go.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { buildCli } from '../helpers/builtCli';
import { runMeasured, writeLargeRun } from '../helpers/largeRunFile';

const MB = 1024 * 1024;
const FILE_BYTES = 160 * MB;

let dir: string;
let file: string;
beforeAll(() => {
  buildCli();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-readers-memory-'));
  file = path.join(dir, 'large.jsonl');
  writeLargeRun(file, FILE_BYTES);
}, 120_000);
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('the readers on a 160 MB journaled file (built executable, stdout a pipe)', () => {
  it('show --full prints the whole conversation with a peak RSS under 150 MB, whatever the file size', async () => {
    const result = await runMeasured(dir, ['show', '--full', file]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    // The whole answer of every turn came out: most of the file.
    expect(result.outBytes).toBeGreaterThan(FILE_BYTES * 0.8);
    expect(result.maxRssBytes).toBeLessThan(150 * MB);
  }, 120_000);

  it('report writes the page holding every move but none of the journal lines, with a peak RSS under 220 MB', async () => {
    // The page embeds every move, so its memory follows the moves (here 4 per turn, 77,000
    // in all); the journal, nearly all of the file, is folded as it is read and let go.
    const output = path.join(dir, 'large.html');
    const result = await runMeasured(dir, ['report', file, '-o', output]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(fs.statSync(output).size).toBeGreaterThan(MB);
    expect(result.maxRssBytes).toBeLessThan(220 * MB);
  }, 120_000);
});
