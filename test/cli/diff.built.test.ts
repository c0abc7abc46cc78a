// `agent-sm diff` (the built executable, in a child process) on real batches: the same three
// tasks run by scripted agents with one thing changed per variant (helpers/diffBatch.ts). Each
// pair says where its runs first diverge and exits 1; the same batch run twice (another clock
// speed: time is never compared) exits 0; what cannot be read exits 2, naming it.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createScriptedAgent, runBatch } from '../../lib/index';
import { buildCli, runBuiltCli } from '../helpers/builtCli';
import { runDiffBatch, type DiffVariant } from '../helpers/diffBatch';

let dir: string;
const folder = (variant: string): string => path.join(dir, variant);

beforeAll(async () => {
  buildCli();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-diff-'));
  const variants: DiffVariant[] = ['base', 'prompt', 'response', 'toolFails', 'modelFails'];
  for (const variant of variants) await runDiffBatch(folder(variant), variant);
  await runDiffBatch(folder('base-again'), 'base', 13);
}, 120_000);
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const diff = (...args: string[]): { code: number | null; stdout: string; stderr: string } =>
  runBuiltCli(['diff', ...args]);

describe('agent-sm diff: the same', () => {
  it('the same batch run twice (at another pace) is the same: exit 0', () => {
    const out = diff(folder('base'), folder('base-again'));
    expect({ code: out.code, stderr: out.stderr }).toEqual({ code: 0, stderr: '' });
    expect(out.stdout).toMatch(/^Same: .* ran the same 3 tasks alike/);
    expect(out.stdout).toContain('  LLM calls      5 → 5\n');
    expect(out.stdout).toContain('  money A        $0.0610 billed\n');
    expect(out.stdout).toMatch(/ {2}wall time {6}\d+ ms → \d+ ms \(\+\d+ ms\)/);
  });

  it('a run and its rerun are the same: exit 0, and --json says so', () => {
    const out = diff(path.join(folder('base'), 'a.jsonl'), path.join(folder('base-again'), 'a.jsonl'));
    expect({ code: out.code, stderr: out.stderr }).toEqual({ code: 0, stderr: '' });
    expect(out.stdout).toMatch(/^Same: .* took the same 15 steps \(timestamps, durations and run ids aside\)/);
    const json = JSON.parse(diff('--json', folder('base'), folder('base-again'), 'a').stdout) as Record<
      string,
      unknown
    >;
    expect(json).toMatchObject({ kind: 'runs', same: true, sameSteps: 15 });
  });
});

describe('agent-sm diff: where runs first differ', () => {
  it('a changed prompt: a different request, the message both ways, exit 1', () => {
    const out = diff(folder('base'), folder('prompt'), 'b');
    expect({ code: out.code, stderr: out.stderr }).toEqual({ code: 1, stderr: '' });
    expect(out.stdout.split('\n')[0]).toMatch(
      /^Differ: .*b\.jsonl and .*b\.jsonl first differ at step 2 \(seq 2\): a different request \(the prompt/,
    );
    expect(out.stdout).toContain(
      ['    input.message', '      A "fix the bug in b"', '      B "fix the bug in b, and add a test"'].join('\n'),
    );
  });

  it("a changed answer: a different response, the text both ways, and the money's change", () => {
    const out = diff(path.join(folder('base'), 'a.jsonl'), path.join(folder('response'), 'a.jsonl'));
    expect({ code: out.code, stderr: out.stderr }).toEqual({ code: 1, stderr: '' });
    expect(out.stdout).toMatch(
      /first differ at step 13 \(seq 10\): a different response \(the model answered otherwise\)/,
    );
    expect(out.stdout).toContain('    response.text\n      A "fixed"\n      B "I could not find it"\n');
    expect(out.stdout).toContain('  billed         $0.0300 → $0.0400 (+$0.0100)\n');
    expect(out.stdout).toContain('  output tokens  50 → 80 (+30)\n');
    expect(out.stdout).toContain('  outcome        end_of_turn (both)\n');
  });

  it('a tool made to fail: a different tool result', () => {
    const out = diff(folder('base'), folder('toolFails'), 'a');
    expect({ code: out.code, stderr: out.stderr }).toEqual({ code: 1, stderr: '' });
    expect(out.stdout).toMatch(/first differ at step \d+ \(seq 6\): a different tool result\n/);
    expect(out.stdout).toMatch(/ {2}B line 10 {2}tool grep \(a1\) error: .*grep: permission denied/);
    const json = JSON.parse(diff('--json', folder('base'), folder('toolFails'), 'a').stdout) as {
      divergence: { kind: string; a: { line: number }; b: { line: number } };
    };
    expect(json.divergence).toMatchObject({ kind: 'tool_result', a: { line: 10 }, b: { line: 10 } });
  });

  it('the batches of each change: the changed task named with how it first differs, exit 1', () => {
    const cases: Array<[DiffVariant, string, string]> = [
      ['prompt', 'b', 'request'],
      ['response', 'a', 'response'],
      ['toolFails', 'a', 'tool_result'],
    ];
    for (const [variant, task, kind] of cases) {
      const out = diff(folder('base'), folder(variant));
      expect({ variant, code: out.code, stderr: out.stderr }).toEqual({ variant, code: 1, stderr: '' });
      expect(out.stdout).toMatch(new RegExp(`\\n {2}${task} +end_of_turn .* first differs: ${kind}\\n`));
      const json = JSON.parse(diff('--json', folder('base'), folder(variant)).stdout) as {
        same: boolean;
        changed: Array<{ id: string }>;
        divergences: Record<string, string>;
      };
      expect(json).toMatchObject({ kind: 'batches', same: false, divergences: { [task]: kind } });
      expect(json.changed.map((p) => p.id)).toEqual([task]);
    }
  });

  it('a regression comes first, with both reasons; the totals count it', () => {
    const out = diff(folder('base'), folder('modelFails'));
    expect({ code: out.code, stderr: out.stderr }).toEqual({ code: 1, stderr: '' });
    expect(out.stdout).toContain(
      [
        '',
        'Regressions: ended well in A, not in B (1)',
        '  b   end_of_turn → error  $0.0300 → $0.0100 (3 calls of unknown cost) (-$0.0200)  first differs: response',
        '    A: end_of_turn',
        '    B: sendToolResults failed after 3 attempts: HTTP 503: the model is overloaded',
      ].join('\n'),
    );
    expect(out.stdout).toContain('  ended well     3 → 2 (-1)\n');
    // B's three failed attempts may have been billed, and nothing held them: of unknown cost, never $0.
    expect(out.stdout).toContain('  unknown cost   0 → 3 (+3) LLM calls\n');
    // The other way round it is an improvement.
    const back = diff(folder('modelFails'), folder('base'));
    expect(back.code).toBe(1);
    expect(back.stdout).toContain('Improvements: failed in A, ended well in B (1)\n  b   error → end_of_turn');
  });

  it('tasks on one side only are listed, and differ', () => {
    const extra = path.join(dir, 'extra');
    fs.cpSync(folder('base'), extra, { recursive: true });
    fs.copyFileSync(path.join(extra, 'c.jsonl'), path.join(extra, 'd.jsonl'));
    const out = diff(folder('base'), extra);
    expect(out.code).toBe(1);
    expect(out.stdout).toContain('\nOnly in B, ');
    expect(out.stdout).toMatch(/\n {2}d {2}end_of_turn {2}\$0\.0010\n/);
  });

  it('--html writes one page and prints its path', () => {
    const page = path.join(dir, 'diff.html');
    const out = diff('--html', page, folder('base'), folder('response'), 'a');
    expect({ code: out.code, stdout: out.stdout, stderr: out.stderr }).toEqual({
      code: 1,
      stdout: `${page}\n`,
      stderr: '',
    });
    const html = fs.readFileSync(page, 'utf8');
    expect(html).toMatch(/^<!DOCTYPE html>/);
    expect(html).toContain('I could not find it');
    expect(html).not.toMatch(/<script/);
  });
});

describe('agent-sm diff: what cannot be read exits 2, naming it', () => {
  it('a missing file', () => {
    const missing = path.join(dir, 'nowhere.jsonl');
    const out = diff(path.join(folder('base'), 'a.jsonl'), missing);
    expect({ code: out.code, stdout: out.stdout }).toEqual({ code: 2, stdout: '' });
    expect(out.stderr).toMatch(/^agent-sm: error: .*nowhere\.jsonl/);
  });

  it('a corrupt line', () => {
    const bad = path.join(dir, 'bad.jsonl');
    fs.writeFileSync(bad, `${fs.readFileSync(path.join(folder('base'), 'a.jsonl'), 'utf8')}{not json\n{"seq":99}\n`);
    const out = diff(path.join(folder('base'), 'a.jsonl'), bad);
    expect(out.code).toBe(2);
    expect(out.stderr).toMatch(/^agent-sm: error: .*bad\.jsonl:19: corrupt line/);
  });

  it('a batch with a run that cannot be read: the diff, then the run named, exit 2', () => {
    const broken = path.join(dir, 'broken');
    fs.cpSync(folder('base'), broken, { recursive: true });
    fs.writeFileSync(path.join(broken, 'c.jsonl'), '{not json\n{"seq":1}\n');
    const out = diff(folder('base'), broken);
    expect(out.code).toBe(2);
    expect(out.stdout).toMatch(/^Differ: /);
    expect(out.stderr).toMatch(/^agent-sm: error: .*broken\/c\.jsonl/m);
  });

  it('a folder against a file: what to give instead', () => {
    const out = diff(folder('base'), path.join(folder('base'), 'a.jsonl'));
    expect(out.code).toBe(2);
    expect(out.stderr).toContain('is a folder and');
    expect(out.stderr).toContain('give two history files or two batch folders');
  });

  it('a task neither folder has', () => {
    const out = diff(folder('base'), folder('prompt'), 'zz');
    expect(out.code).toBe(2);
    expect(out.stderr).toContain('holds no run "zz"');
  });

  it('the help names the exit codes', () => {
    const out = runBuiltCli(['diff', '--help']);
    expect(out.code).toBe(0);
    expect(out.stdout.replace(/\s+/g, ' ')).toContain(
      'Exit 0 when the same, 1 when they differ, 2 when something could not be read',
    );
  });
});

describe('agent-sm diff: hostile text is escaped', () => {
  const ID = 'ta\u001b[2Jsk\u202eevil';
  const OUTPUT = 'found\u001b]0;pwned\u0007 it\u2066\nnext line';

  it('control characters and bidi controls in task ids and outputs print escaped', async () => {
    const run = async (sub: string, output: string): Promise<string> => {
      const historyDir = path.join(dir, sub);
      let t = Date.UTC(2026, 10, 22, 12, 0, 0);
      await runBatch(
        [
          {
            id: ID,
            input: 'go',
            agent: () =>
              createScriptedAgent({
                sleep: async () => undefined,
                replies: [
                  { text: 'look', toolCalls: [{ id: 'x1', name: 'grep', input: {} }], usage: { costUsd: 0.01 } },
                  { text: 'done', usage: { costUsd: 0.01 } },
                ],
                tools: { grep: { output } },
              }),
          },
        ],
        { logger: false, historyDir, sleep: async () => undefined, clock: () => (t += 5) },
      );
      return historyDir;
    };
    const a = await run('hostile-a', 'found it');
    const b = await run('hostile-b', OUTPUT);
    const batch = diff(a, b);
    expect(batch.code).toBe(1);
    expect(batch.stdout).toContain('ta\\u001b[2Jsk\\u202eevil');
    const manifest = JSON.parse(fs.readFileSync(path.join(a, 'batch.json'), 'utf8')) as {
      tasks: Array<{ file: string }>;
    };
    const file = manifest.tasks[0]!.file;
    const runs = diff(path.join(a, file), path.join(b, file));
    expect(runs.code).toBe(1);
    expect(runs.stdout).toContain('a different tool result');
    expect(runs.stdout).toContain('found\\u001b]0;pwned\\u0007 it\\u2066\\nnext line');
    const json = diff('--json', path.join(a, file), path.join(b, file));
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ divergence: { kind: 'tool_result' } });
    for (const out of [batch.stdout, runs.stdout, json.stdout, batch.stderr, runs.stderr])
      // eslint-disable-next-line no-control-regex -- what must not reach the terminal
      expect(out).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/);
  }, 30_000);
});
