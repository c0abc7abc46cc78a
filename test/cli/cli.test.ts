import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { toMermaid } from '../../lib/history/toMermaid';
import { VERSION } from '../../lib/internal/version';
import { T0 } from '../fixtures/agentRun';
import { failedRunFolder } from '../helpers/failedRunFolder';
import { runCli } from '../helpers/runCli';

const ROOT = path.join(__dirname, '..', '..');
const folder = failedRunFolder('agent-sm-cli-');

const cli = runCli;

/** Runs the CLI as a user would: a separate node process on lib/cli/bin.ts. */
function spawnCli(...args: string[]): { code: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, ['--import', 'tsx', path.join(ROOT, 'lib', 'cli', 'bin.ts'), ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, TZ: 'UTC' },
    timeout: 20_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** Replaces line `n` (1-based) of the run file. */
function replaceLine(n: number, text: string): void {
  const lines = fs.readFileSync(folder.runFile, 'utf8').split('\n');
  lines[n - 1] = text;
  fs.writeFileSync(folder.runFile, lines.join('\n'));
}

describe('main()', () => {
  it('inspect prints the failure first: where, why, the moves before it, then where the time went', async () => {
    const { code, stdout, stderr } = await cli('inspect', folder.runFile, '--last', '2');
    expect(code).toBe(0);
    expect(stderr).toBe('');
    const lines = stdout.split('\n');
    expect(lines[0]).toBe(`Run task-42 (agent-state-machine ${VERSION}) — ${folder.runFile}`);
    expect(lines[3]).toBe('FAILED: the run ended in Error at seq 15, line 16 (turn 2, 12:01:00.114)');
    expect(lines[4]).toBe('  where: SendingToLLM → Error, after 30.0 s in SendingToLLM');
    expect(lines[5]).toBe('  why:   LLM request failed');
    expect(lines[6]).toBe('  data:  {"status":529,"message":"overloaded"}');
    expect(lines.slice(8, 11).map((l) => l.trim().split(/\s+/)[0])).toEqual(['seq', '14', '15']);
    expect(stdout).toMatch(
      /Time per state \(1 minute in all\):\n {2}state +visits +total +share +median +max\n {2}SendingToLLM +2 +33\.0 s +55%/,
    );
    expect(stdout.endsWith('Final state: Error (since seq 15, 12:01:00.114)\n')).toBe(true);
  });

  it('inspect --json prints the summary as JSON', async () => {
    const { code, stdout } = await cli('inspect', folder.runFile, '--json');
    expect(code).toBe(0);
    const summary = JSON.parse(stdout) as {
      file: string;
      status: string;
      failure: { seq: number; data: unknown };
      lastMoves: unknown[];
      meta: { runId: string };
    };
    expect(summary).toMatchObject({
      file: folder.runFile,
      status: 'failed',
      failure: { seq: 15, data: { status: 529, message: 'overloaded' } },
      meta: { runId: 'task-42' },
    });
    expect(summary.lastMoves).toHaveLength(10);
  });

  it('inspect warns about a cut last line and still summarizes', async () => {
    const text = fs.readFileSync(folder.runFile, 'utf8');
    fs.writeFileSync(folder.runFile, text.slice(0, -30));
    const { code, stdout, stderr } = await cli('inspect', folder.runFile);
    expect(code).toBe(0);
    expect(stderr).toBe(
      `agent-sm: warning: ${folder.runFile}:16: the last line is incomplete (the run was probably killed while writing it) and was skipped\n`,
    );
    expect(stdout).toMatch(
      /INCOMPLETE, ended without a terminal move \(interrupted\?\): the history ends inside turn 2, in SendingToLLM/,
    );
  });

  it('validate exits 0 on a clean file, 1 listing every problem with its line and seq', async () => {
    expect(await cli('validate', folder.runFile)).toEqual({
      code: 0,
      stdout: `${folder.runFile}: 15 records, no problems\n`,
      stderr: '',
    });
    const lines = fs.readFileSync(folder.runFile, 'utf8').split('\n');
    const rec = (n: number): Record<string, unknown> => JSON.parse(lines[n - 1]!) as Record<string, unknown>;
    replaceLine(5, JSON.stringify({ ...rec(5), to: 'Error' })); // seq 4 ProcessingLLMResponse → Error, then seq 5 leaves from ToolUseRequested
    replaceLine(12, JSON.stringify({ ...rec(12), at: 0 }));
    const previousAt = (JSON.parse(lines[10]!) as { at: number }).at; // seq 10
    const { code, stdout } = await cli('validate', folder.runFile);
    expect(code).toBe(1);
    expect(stdout).toBe(
      [
        `${folder.runFile}:6: seq 5: broken_chain: starts from ToolUseRequested, but seq 4 left the machine in Error`,
        `${folder.runFile}:12: seq 11: time_backwards: time goes back ${previousAt} ms: at 0 after ${previousAt} (seq 10)`,
        `${folder.runFile}: 2 problems in 15 records`,
        '',
      ].join('\n'),
    );
  });

  it('validate says a file cut off mid-run ended without a terminal move, never just "no problems"', async () => {
    const lines = fs.readFileSync(folder.runFile, 'utf8').trimEnd().split('\n');
    const cut = path.join(path.dirname(folder.runFile), 'cut.jsonl');
    // The meta line and the first three moves: the process was killed in the first turn.
    fs.writeFileSync(cut, `${lines.slice(0, 4).join('\n')}\n`);
    const { code, stdout } = await cli('validate', cut);
    expect(code).toBe(0);
    expect(stdout).toBe(
      `${cut}: ended without a terminal move (interrupted?): its last move is SendingToLLM → ProcessingLLMResponse (seq 3)\n${cut}: 3 records, no problems in them, but the run did not end\n`,
    );
    // Only its first line: the run was killed before its first move.
    fs.writeFileSync(cut, `${lines[0]}\n`);
    expect((await cli('validate', cut)).stdout).toContain(
      'ended without a terminal move (interrupted?): it holds no move',
    );
    expect((await cli('inspect', cut)).stdout).toContain(
      'No transitions recorded: the run ended without a terminal move (interrupted?).',
    );
  });

  it('validate --json prints the verdict as JSON', async () => {
    const { code, stdout } = await cli('validate', folder.runFile, '--json');
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual({ file: folder.runFile, ok: true, records: 15, issues: [] });
  });

  it('diagram prints the table, the run over it, or its timeline', async () => {
    expect(await cli('diagram')).toEqual({ code: 0, stdout: `${toMermaid()}\n`, stderr: '' });
    const run = await cli('diagram', '--history', folder.runFile);
    expect(run.stdout).toContain('    SendingToLLM --> Error : 1×\n');
    expect(run.stdout).toContain('    note right of Error : ended here (seq 15)\n');
    const gantt = await cli('diagram', '--history', folder.runFile, '--gantt');
    expect(gantt.stdout).toMatch(/^---\ndisplayMode: compact\n---\ngantt\n {4}title Run task-42\n/);
    expect(gantt.stdout).toContain(`    LLM request failed :${T0 + 30114}, ${T0 + 60114}\n`);
  });

  it('reports errors as one line on stderr with exit code 2: missing file, corrupt line, bad usage', async () => {
    const missing = path.join(folder.dir, 'missing.jsonl');
    expect(await cli('inspect', missing)).toEqual({
      code: 2,
      stdout: '',
      stderr: `agent-sm: error: ${missing}: no such file; check the path (agent-sm inspect --help says what it reads)\n`,
    });

    replaceLine(8, '{"seq":7,"from":"RunningTool",');
    const corrupt = await cli('validate', folder.runFile);
    expect(corrupt.code).toBe(2);
    expect(corrupt.stderr).toMatch(
      new RegExp(
        `^agent-sm: error: ${folder.runFile.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:8: corrupt line: not JSON .*\n$`,
      ),
    );

    for (const argv of [
      ['inspec', folder.runFile],
      ['inspect'],
      ['inspect', folder.runFile, '--last', '0'],
      ['diagram', '--gantt'],
      ['validate', folder.runFile, '--nope'],
    ]) {
      const { code, stderr, stdout } = await cli(...argv);
      expect({
        argv,
        code,
        lines: stderr.split('\n').length,
        prefix: stderr.startsWith('agent-sm: error: '),
        stdout,
      }).toEqual({ argv, code: 2, lines: 2, prefix: true, stdout: '' });
    }
    expect((await cli('inspec', folder.runFile)).stderr).toBe(
      "agent-sm: error: unknown command 'inspec' (Did you mean inspect?); see agent-sm --help\n",
    );
  });

  it('bad usage names the value, what was expected, and the help of the command that says what to give', async () => {
    expect((await cli('inspect', folder.runFile, '--last', '0')).stderr).toBe(
      "agent-sm: error: option '--last <n>' argument '0' is invalid. expected a positive integer, got \"0\"; see agent-sm inspect --help\n",
    );
    expect((await cli('validate', folder.runFile, '--nope')).stderr).toBe(
      "agent-sm: error: unknown option '--nope'; see agent-sm validate --help\n",
    );
    expect((await cli('show')).stderr).toBe(
      "agent-sm: error: missing required argument 'path'; see agent-sm show --help\n",
    );
    const nope = path.join(folder.dir, 'nope');
    expect((await cli('watch', nope)).stderr).toMatch(
      /: no such file or folder to watch \(ENOENT[^)]*\); check the path \(agent-sm watch --help says what it reads\)\n$/,
    );
  });

  it('raise on a folder no batch wrote says what folder to give', async () => {
    const { code, stderr } = await cli('raise', folder.dir, '--total-usd', '2');
    expect(code).toBe(2);
    expect(stderr).toBe(
      `agent-sm: error: ${folder.dir}: is not the history folder of a batch (it has no batch.json): ` +
        'give the folder runBatch wrote (its historyDir), or --redis URL --batch ID for a BullMQ batch\n',
    );
  });

  it('report writes the run page next to the history file, or where -o says, and prints its path', async () => {
    const byDefault = await cli('report', folder.runFile);
    expect(byDefault).toEqual({ code: 0, stdout: `${path.join(folder.dir, 'run.html')}\n`, stderr: '' });
    const html = fs.readFileSync(path.join(folder.dir, 'run.html'), 'utf8');
    expect(html).toMatch(/^<!DOCTYPE html>/);
    expect(html).toContain('<h1>Run task-42 <span class="badge error">error</span></h1>');
    const out = path.join(folder.dir, 'elsewhere.html');
    expect(await cli('report', folder.runFile, '-o', out)).toEqual({ code: 0, stdout: `${out}\n`, stderr: '' });
    expect(fs.readFileSync(out, 'utf8')).toBe(html);
  });

  it('report writes a batch page for a folder, into it by default, warning about files it could not read', async () => {
    const runs = path.join(folder.dir, 'runs');
    fs.mkdirSync(runs);
    fs.copyFileSync(folder.runFile, path.join(runs, 'a.jsonl'));
    fs.writeFileSync(path.join(runs, 'b.jsonl'), 'garbage\nmore\n');
    const { code, stdout, stderr } = await cli('report', runs);
    expect(code).toBe(0);
    expect(stdout).toBe(`${path.join(runs, 'report.html')}\n`);
    expect(stderr).toMatch(/^agent-sm: warning: .*runs\/b\.jsonl:1: corrupt line: .* \(listed as unreadable\)\n$/);
    expect(fs.readFileSync(path.join(runs, 'report.html'), 'utf8')).toContain('<h1>Batch of 2 runs</h1>');
  });

  it('report fails with one line for a missing path or an unwritable output', async () => {
    expect(await cli('report', path.join(folder.dir, 'nope'))).toEqual({
      code: 2,
      stdout: '',
      stderr: `agent-sm: error: ${path.join(folder.dir, 'nope')}: no such file or folder; check the path (agent-sm report --help says what it reads)\n`,
    });
    const bad = await cli('report', folder.runFile, '-o', path.join(folder.dir, 'no-such-dir', 'x.html'));
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^agent-sm: error: cannot write the report to .*no-such-dir\/x\.html: ENOENT/);
    const before = fs.readFileSync(folder.runFile, 'utf8');
    expect(await cli('report', folder.runFile, '-o', folder.runFile)).toEqual({
      code: 2,
      stdout: '',
      stderr: `agent-sm: error: -o ${folder.runFile} is the history file itself; choose another path for the page\n`,
    });
    expect(fs.readFileSync(folder.runFile, 'utf8')).toBe(before);
  });

  it('--help works on every command and exits 0', async () => {
    for (const argv of [
      ['--help'],
      ['inspect', '--help'],
      ['validate', '--help'],
      ['diagram', '--help'],
      ['diff', '--help'],
      ['help', 'inspect'],
    ]) {
      const { code, stdout } = await cli(...argv);
      expect({ argv, code }).toEqual({ argv, code: 0 });
      expect(stdout).toMatch(/^Usage: agent-sm/);
    }
    expect(await cli('--version')).toEqual({ code: 0, stdout: `${VERSION}\n`, stderr: '' });
  });
});

describe('agent-sm (spawned)', () => {
  it('inspect tells where and why the run failed', () => {
    const { code, stdout, stderr } = spawnCli('inspect', folder.runFile);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toContain(
      'FAILED: the run ended in Error at seq 15, line 16 (turn 2, 12:01:00.114)\n  where: SendingToLLM → Error, after 30.0 s in SendingToLLM\n  why:   LLM request failed\n',
    );
  });

  it('validate exits 1 and lists the problem', () => {
    const lines = fs.readFileSync(folder.runFile, 'utf8').split('\n');
    lines.splice(9, 1); // drop seq 9: lost record
    fs.writeFileSync(folder.runFile, lines.join('\n'));
    const { code, stdout } = spawnCli('validate', folder.runFile);
    expect(code).toBe(1);
    expect(stdout).toContain(`${folder.runFile}:10: seq 10: seq_gap: seq jumps from 8 to 10: 1 record lost\n`);
  });

  it('diagram prints Mermaid on stdout', () => {
    const { code, stdout } = spawnCli('diagram');
    expect(code).toBe(0);
    expect(stdout).toBe(`${toMermaid()}\n`);
  });

  it('fails with one line on stderr and no stack trace for a missing file and an unknown command', () => {
    const missing = spawnCli('inspect', path.join(folder.dir, 'nope.jsonl'));
    expect(missing).toEqual({
      code: 2,
      stdout: '',
      stderr: `agent-sm: error: ${path.join(folder.dir, 'nope.jsonl')}: no such file; check the path (agent-sm inspect --help says what it reads)\n`,
    });
    const unknown = spawnCli('frobnicate');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toBe("agent-sm: error: unknown command 'frobnicate'; see agent-sm --help\n");
  });

  it('--help prints usage and exits 0', () => {
    const { code, stdout } = spawnCli('inspect', '--help');
    expect(code).toBe(0);
    expect(stdout).toMatch(/^Usage: agent-sm inspect \[options\] <path> \[runId\]/);
  });
});
