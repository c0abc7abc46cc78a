// `agent-sm diff` on two large journaled files, as the built executable with stdout a pipe:
// both are streamed in step, so its peak memory (the child's max RSS, reported by the child at
// exit) stays far below the files' size and does not grow with them — whether the runs are the
// same to the end, or part early and are then read on for their figures alone.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { buildCli } from '../helpers/builtCli';
import { runMeasured, writeLargeRun } from '../helpers/largeRunFile';

const MB = 1024 * 1024;
const FILE_BYTES = 160 * MB;
// The CLI's heap capped well under one file's size: a diff that held a file would run out of it.
const HEAP = ['--max-old-space-size=64'];

let dir: string;
const pair = (name: string, bytes: number): { a: string; b: string } => {
  const a = path.join(dir, `${name}-a.jsonl`);
  const b = path.join(dir, `${name}-b.jsonl`);
  writeLargeRun(a, bytes);
  fs.copyFileSync(a, b);
  // The second turn's prompt, changed in place (the same length): the runs part at its LLM line.
  const fd = fs.openSync(b, 'r+');
  try {
    const head = Buffer.alloc(64 * 1024);
    fs.readSync(fd, head, 0, head.length, 0);
    const at = head.indexOf('"question 2"');
    if (at < 0) throw new Error('no second turn in the head of the file');
    fs.writeSync(fd, '"question Z"', at);
  } finally {
    fs.closeSync(fd);
  }
  return { a, b };
};

let large: { a: string; b: string };
let small: { a: string; b: string };
beforeAll(() => {
  buildCli();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-diff-memory-'));
  large = pair('large', FILE_BYTES);
  small = pair('small', FILE_BYTES / 10);
}, 120_000);
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('agent-sm diff on two 160 MB journaled files (built executable, stdout a pipe)', () => {
  it('the same to the end: read in step, peak RSS independent of the size', async () => {
    const result = await runMeasured(dir, ['diff', large.a, path.join(dir, 'large-a.jsonl')], HEAP);
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
    expect(result.stdout).toMatch(/^Same: .* took the same [\d,]+ steps/);
    const tenth = await runMeasured(dir, ['diff', small.a, small.a], HEAP);
    expect(tenth.code).toBe(0);
    // 144 MB more of each file, at most 64 MB more memory; a diff holding either file would add more.
    expect(result.maxRssBytes - tenth.maxRssBytes).toBeLessThan(64 * MB);
    expect(result.maxRssBytes).toBeLessThan(256 * MB);
  }, 180_000);

  it('parted early, then read on for the figures: peak RSS independent of the size', async () => {
    const result = await runMeasured(dir, ['diff', large.a, large.b], HEAP);
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 1, stderr: '' });
    expect(result.stdout).toMatch(/first differ at step 8 \(seq 6\): a different request/);
    expect(result.stdout).toContain('    input.message\n      A "question 2"\n      B "question Z"\n');
    const tenth = await runMeasured(dir, ['diff', small.a, small.b], HEAP);
    expect(tenth.code).toBe(1);
    expect(result.maxRssBytes - tenth.maxRssBytes).toBeLessThan(64 * MB);
    expect(result.maxRssBytes).toBeLessThan(256 * MB);
  }, 180_000);
});
