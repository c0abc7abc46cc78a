import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { main } from '../../lib/cli/main';
import { JsonlHistorySink } from '../../lib/history/JsonlHistorySink';
import { StateMachine } from '../../lib/machine/StateMachine';
import { failedRun, T0 } from '../fixtures/agentRun';

const ROOT = path.join(__dirname, '..', '..');
// eslint-disable-next-line no-control-regex -- it is the control characters this test looks for
const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;
let dir: string;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-cli-h-'));
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

async function cli(
  argv: string[],
  stdin?: AsyncIterable<Uint8Array>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await main(argv, {
    stdout: (t) => void (stdout += t),
    stderr: (t) => void (stderr += t),
    ...(stdin === undefined ? {} : { stdin }),
  });
  return { code, stdout, stderr };
}

function writeFailedRun(name = 'run.jsonl'): string {
  const file = path.join(dir, name);
  const sink = JsonlHistorySink.open(file, { runId: 'task-42', startedAt: T0 });
  failedRun(sink);
  sink.close();
  return file;
}

const good = (seq: number): string =>
  JSON.stringify({
    seq,
    from: seq === 1 ? 'Ready' : 'WaitingForUserInput',
    to: seq === 1 ? 'WaitingForUserInput' : 'SendingToLLM',
    description: `r${seq}`,
    at: T0 + seq,
    durationMs: 0,
    forced: false,
  });

describe('agent-sm on hostile files', () => {
  it('inspect and validate print hostile descriptions, run ids and file names escaped', async () => {
    const file = path.join(dir, 'run\u001b[2J.jsonl');
    const hostile = 'x\u001b]0;pwned\u0007\nOK: the last turn ended in EndOfTurn.';
    const sink = JsonlHistorySink.open(file, { runId: hostile, startedAt: T0 });
    const machine = new StateMachine({ logger: false, sink, clock: () => T0 });
    machine.transition('WaitingForUserInput', hostile);
    machine.transition('SendingToLLM', hostile);
    machine.forceTransition('Error', hostile);
    sink.close();
    for (const argv of [
      ['inspect', file],
      ['inspect', '--json', file],
      ['validate', file],
      ['validate', '--json', file],
    ]) {
      const { stdout, stderr } = await cli(argv);
      expect({ argv, stdout: CONTROL.test(stdout), stderr: CONTROL.test(stderr) }).toEqual({
        argv,
        stdout: false,
        stderr: false,
      });
      expect(stdout.split('\n').filter((l) => l.startsWith('OK:'))).toEqual([]);
    }
    const missing = await cli(['inspect', path.join(dir, 'no\u001b[2J.jsonl')]);
    expect(missing.stderr.trimEnd()).not.toMatch(CONTROL);
  });

  it('inspect and validate name a glued line and suggest --salvage; --salvage lists the skipped lines', async () => {
    const file = path.join(dir, 'glued.jsonl');
    fs.writeFileSync(file, `${good(1)}\n${good(2).slice(0, 15)}${good(2)}\n`);
    const plain = await cli(['validate', file]);
    expect(plain.code).toBe(2);
    expect(plain.stderr).toMatch(/glued\.jsonl:2: corrupt line: .*--salvage/);
    const salvaged = await cli(['validate', '--salvage', file]);
    expect(salvaged.code).toBe(1);
    expect(salvaged.stdout).toMatch(/skipped 1 corrupt line \(--salvage\): 2/);
    const inspected = await cli(['inspect', '--salvage', file]);
    expect(inspected.code).toBe(0);
    expect(inspected.stdout).toMatch(/Skipped corrupt lines \(--salvage\): 2/);
    expect(inspected.stderr).toMatch(/:2: skipped a corrupt line/);
  });

  it('inspect and validate say an empty file is empty; validate exits 1', async () => {
    const file = path.join(dir, 'empty.jsonl');
    fs.writeFileSync(file, '');
    const validated = await cli(['validate', file]);
    expect(validated).toMatchObject({ code: 1, stdout: expect.stringMatching(/empty\.jsonl: the file is empty/) });
    const inspected = await cli(['inspect', file]);
    expect(inspected.stderr).toMatch(/empty\.jsonl is empty/);
    expect((await cli(['inspect', '--exit-code', file])).code).toBe(1);
  });

  it('inspect --exit-code exits 1 for a failed run and 0 for a good one', async () => {
    const failed = writeFailedRun();
    expect((await cli(['inspect', failed])).code).toBe(0);
    expect((await cli(['inspect', '--exit-code', failed])).code).toBe(1);
    const ok = path.join(dir, 'ok.jsonl');
    const sink = JsonlHistorySink.open(ok, { startedAt: T0 });
    const machine = new StateMachine({ logger: false, sink, clock: () => T0 });
    for (const to of ['WaitingForUserInput', 'SendingToLLM', 'ProcessingLLMResponse', 'EndOfTurn'] as const)
      machine.transition(to);
    sink.close();
    expect((await cli(['inspect', '--exit-code', ok])).code).toBe(0);
  });

  it('- reads standard input, for inspect, validate and diagram --history', async () => {
    const text = fs.readFileSync(writeFailedRun(), 'utf8');
    async function* stdin(): AsyncGenerator<Uint8Array> {
      yield Buffer.from(text);
    }
    const inspected = await cli(['inspect', '-'], stdin());
    expect(inspected.stdout).toMatch(/FAILED: the run ended in Error/);
    expect(inspected.stdout).toMatch(/\(standard input\)/);
    const validated = await cli(['validate', '-'], stdin());
    expect(validated.code).toBe(0);
    const drawn = await cli(['diagram', '--history', '-'], stdin());
    expect(drawn.stdout).toMatch(/^stateDiagram-v2/);
  });

  it('inspect --json prints data nested deeper than JSON.stringify can recurse', async () => {
    const file = path.join(dir, 'deep.jsonl');
    const deep = `${'['.repeat(20000)}${']'.repeat(20000)}`;
    fs.writeFileSync(
      file,
      `{"seq":1,"from":"Ready","to":"Error","description":"x","at":${T0},"durationMs":0,"forced":true,"data":${deep}}\n`,
    );
    const { code, stdout, stderr } = await cli(['inspect', '--json', file]);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toContain('[nested too deep to show]');
    expect(() => JSON.parse(stdout) as unknown).not.toThrow();
  });

  it('inspect of a line over 64 MiB (/dev/zero) is one error line, not a crash', async () => {
    if (!fs.existsSync('/dev/zero')) throw new Error('this test needs /dev/zero (Linux)');
    const { code, stderr } = await cli(['inspect', '/dev/zero']);
    expect(code).toBe(2);
    expect(stderr).toMatch(/^agent-sm: error: \/dev\/zero:1: line is longer than the limit of 67,108,864 bytes/);
  });

  it('inspect > /dev/full prints one error line and exits 2, with no stack trace', () => {
    if (!fs.existsSync('/dev/full')) throw new Error('this test needs /dev/full (Linux)');
    const file = writeFailedRun();
    const out = fs.openSync('/dev/full', 'w');
    try {
      const result = spawnSync(
        process.execPath,
        ['--import', 'tsx', path.join(ROOT, 'lib', 'cli', 'bin.ts'), 'inspect', file],
        { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', out, 'pipe'], timeout: 20_000 },
      );
      expect(result.status).toBe(2);
      expect(result.stderr).toMatch(/^agent-sm: error: cannot write the output: ENOSPC/);
      expect(result.stderr).not.toMatch(/\n\s+at /);
    } finally {
      fs.closeSync(out);
    }
  });
});
