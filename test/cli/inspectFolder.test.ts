// `agent-sm inspect <folder>`: a batch's runs, failures first, and its totals; and the commands
// that read one run taking `<folder> <runId>`.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createScriptedAgent, type ScriptedReply } from '../../lib/agent/createScriptedAgent';
import { writeBatchManifest } from '../../lib/batch/keeping/batchManifest';
import { lockFolder } from '../../lib/batch/keeping/lockFolder';
import { requestRaise } from '../../lib/batch/raises/requestRaise';
import { runBatch, type BatchTask } from '../../lib/batch/runBatch';
import { buildCli, runBuiltCli } from '../helpers/builtCli';
import { runCli } from '../helpers/runCli';

const instant = async (): Promise<void> => undefined;
const COST = { inputTokens: 100, outputTokens: 10, costUsd: 0.1 };
const TWO_CALLS: ScriptedReply[] = [
  { toolCalls: [{ id: 'c1', name: 'bash' }], usage: COST },
  { text: 'done', usage: COST },
];
const task = (id: string, replies: ScriptedReply[]): BatchTask => ({
  id,
  input: 'go',
  agent: () => createScriptedAgent({ sleep: instant, replies, tools: { bash: { output: 'ok' } } }),
});

let dir: string;
beforeAll(() => buildCli(), 120_000);
beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-inspect-folder-'))));
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** ok ($0.20), boom (error), cap ($0.20: the shared $0.35 is spent), never1 and never2 skipped. */
async function stoppedBatch(): Promise<void> {
  const report = await runBatch(
    [
      task('ok', TWO_CALLS),
      task('boom', [{ error: 'model overloaded' }]),
      task('cap', TWO_CALLS),
      task('never1', TWO_CALLS),
      task('never2', TWO_CALLS),
    ],
    {
      historyDir: dir,
      concurrency: 1,
      logger: false,
      retry: { retries: 0 },
      total: { maxCostUsd: 0.35, strict: false },
      journal: true,
    },
  );
  expect(report.runs.map((r) => r.outcome)).toEqual(['end_of_turn', 'error', 'end_of_turn', 'skipped', 'skipped']);
}

describe('agent-sm inspect <folder>', () => {
  it('lists each raise of a paused cap asked in the raise file, with its time, old and new cap', async () => {
    writeBatchManifest(dir, {
      startedAt: 0,
      concurrency: 1,
      limits: { total: { maxCostUsd: 0.1, whenSpent: 'pause' } as { maxCostUsd: number } },
      tasks: [],
    });
    await requestRaise(dir, 0.25, () => Date.UTC(2026, 0, 1, 12, 1, 0));
    await requestRaise(dir, 0.5, () => Date.UTC(2026, 0, 1, 12, 2, 30));
    const r = await runCli('inspect', dir);
    expect(r.stdout).toContain(
      'Cap raised: 2026-01-01 12:01:00  $0.1000 → $0.2500\nCap raised: 2026-01-01 12:02:30  $0.2500 → $0.5000\n',
    );
  });
  it('lists the runs failures first with outcome, reason, cost and file, then the totals and why the batch stopped', async () => {
    await stoppedBatch();
    const { code, stdout, stderr } = await runCli('inspect', dir);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const lines = stdout.split('\n');
    // boom's call failed after its request may have left, with no cap holding it: its cost is unknown, never $0.
    expect(lines[0]).toBe(
      `Batch ${dir}: 5 runs (1 error, 2 skipped, 2 end_of_turn), $0.4000 billed, and 1 LLM call of unknown cost (it failed after the request may have left (model overloaded))`,
    );
    expect(lines[1]).toMatch(
      /^Stopped early: 2 of 5 tasks never started: the batch's cap was reached: cost \$0\.40\d* of \$0\.35\d* \(maxCostUsd\)$/,
    );
    const runs = lines.slice(lines.indexOf('Runs, failures first') + 1, lines.indexOf('Runs by outcome') - 1);
    expect(runs).toEqual([
      '  boom    error        $0.0000 (1 call of unknown cost)  sendUserMessage failed after 1 attempt: model overloaded',
      `    file: ${path.join(dir, 'boom.jsonl')}`,
      '  never1  skipped      $0.0000',
      '  never2  skipped      $0.0000',
      '  ok      end_of_turn  $0.2000',
      `    file: ${path.join(dir, 'ok.jsonl')}`,
      '  cap     end_of_turn  $0.2000',
      `    file: ${path.join(dir, 'cap.jsonl')}`,
    ]);
    expect(stdout).toContain(
      'Runs by outcome\n  error        1\n  skipped      2\n  end_of_turn  2\n  total        5\nTotal cost $0.4000 billed, and 1 LLM call of unknown cost (it failed after the request may have left (model overloaded))\n',
    );
  });

  it('--json prints the same; --exit-code exits 1 when a run failed, 0 when none did', async () => {
    await stoppedBatch();
    const json = await runCli('inspect', '--json', '--exit-code', dir);
    expect(json.code).toBe(1);
    const value = JSON.parse(json.stdout) as Record<string, unknown>;
    expect(value).toMatchObject({
      folder: dir,
      manifest: true,
      running: false,
      resumed: false,
      totals: {
        runs: 5,
        outcomes: { error: 1, skipped: 2, end_of_turn: 2 },
        costUsd: 0.4,
        uncertainUsd: 0,
        releasedUsd: 0,
      },
    });
    expect(value['stopped']).toMatch(/^2 of 5 tasks never started: the batch's cap was reached/);
    expect((value['runs'] as Array<Record<string, unknown>>).map((r) => [r['id'], r['outcome']])).toEqual([
      ['boom', 'error'],
      ['never1', 'skipped'],
      ['never2', 'skipped'],
      ['ok', 'end_of_turn'],
      ['cap', 'end_of_turn'],
    ]);
    expect((value['runs'] as Array<Record<string, unknown>>)[0]).toEqual({
      id: 'boom',
      outcome: 'error',
      reason: 'sendUserMessage failed after 1 attempt: model overloaded',
      costUsd: 0,
      uncertainUsd: 0,
      releasedUsd: 0,
      uncertain: [],
      unpricedCalls: 1,
      unpriced: [{ why: 'it failed after the request may have left (model overloaded)', calls: 1 }],
      file: path.join(dir, 'boom.jsonl'),
      interrupted: [],
    });

    const clean = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-inspect-clean-'));
    try {
      await runBatch([task('a', TWO_CALLS), task('b', TWO_CALLS)], { historyDir: clean, logger: false });
      const ok = await runCli('inspect', '--exit-code', clean);
      expect(ok.code).toBe(0);
      expect(ok.stdout).toContain('Runs\n');
      expect(ok.stdout).not.toContain('Stopped early');
    } finally {
      fs.rmSync(clean, { recursive: true, force: true });
    }
  });

  it('a run cut off mid-turn is listed after the failures as cut_off, with where; after a resume, the attempt set aside shows it was resumed', async () => {
    const tasks = ['t0', 't1', 't2'].map((id) => task(id, TWO_CALLS));
    await runBatch(tasks, { historyDir: dir, logger: false });
    const file = path.join(dir, 't1.jsonl');
    fs.writeFileSync(file, `${fs.readFileSync(file, 'utf8').split('\n').slice(0, 4).join('\n')}\n`);
    const cut = await runCli('inspect', '--exit-code', dir);
    expect(cut.code).toBe(1);
    // Its call was in flight, with no worst case held: it may have been billed, at a cost nobody knows.
    expect(cut.stdout).toMatch(
      /^ {2}t1 +cut_off +\$0\.\d{4} \(1 call of unknown cost\) {2}its file ends inside a turn, in \w+ \(seq \d+\)$/m,
    );
    expect(cut.stdout).toMatch(/Stopped early: 1 run was cut off mid-turn/);
    expect(cut.stdout.indexOf('t1')).toBeLessThan(cut.stdout.indexOf('t0'));

    await runBatch(tasks, { historyDir: dir, logger: false, resume: true });
    const resumed = await runCli('inspect', dir);
    expect(resumed.stdout).toContain('Resumed: 1 run went on from an earlier attempt');
    expect(resumed.stdout).toContain(`    earlier attempt: ${file}.interrupted`);
    expect(resumed.stdout).not.toContain('Stopped early');
    expect(JSON.parse((await runCli('inspect', '--json', dir)).stdout)).toMatchObject({ resumed: true });
  });

  it('a batch still running (its lock held) lists its unended runs as running, not failed', async () => {
    await runBatch([task('t0', TWO_CALLS), task('t1', TWO_CALLS)], { historyDir: dir, logger: false });
    const file = path.join(dir, 't1.jsonl');
    fs.writeFileSync(file, `${fs.readFileSync(file, 'utf8').split('\n').slice(0, 4).join('\n')}\n`);
    const lock = lockFolder(dir, 'test batch');
    try {
      const { code, stdout } = await runCli('inspect', '--exit-code', dir);
      expect(code).toBe(0);
      expect(stdout.split('\n')[0]).toMatch(
        /1 running, 1 end_of_turn\), \$0\.\d{4} billed, and 1 LLM call of unknown cost \(reserved with no worst case, and no response recorded \(in flight when the file ended\)\) \(still running\)$/,
      );
    } finally {
      lock.release();
    }
  });

  it('a task a running batch has not started yet is pending, not skipped, and not a failure', async () => {
    await runBatch([task('t0', TWO_CALLS), task('t1', TWO_CALLS)], { historyDir: dir, logger: false });
    fs.rmSync(path.join(dir, 't1.jsonl'));
    const lock = lockFolder(dir, 'test batch');
    try {
      const running = await runCli('inspect', '--exit-code', dir);
      expect(running.code).toBe(0);
      expect(running.stdout.split('\n')[0]).toMatch(/\(1 pending, 1 end_of_turn\), .* \(still running\)$/);
      expect(running.stdout).toMatch(/^ {2}t1 +pending +\$0\.0000$/m);
    } finally {
      lock.release();
    }
    // Once nothing runs the batch, a task it never started was skipped: a failure for --exit-code.
    const ended = await runCli('inspect', '--exit-code', dir);
    expect(ended.code).toBe(1);
    expect(ended.stdout).toMatch(/^ {2}t1 +skipped +\$0\.0000$/m);
  });

  it('a run file that cannot be read is listed as unreadable and named on stderr: exit 2', async () => {
    await runBatch([task('t0', TWO_CALLS), task('t1', TWO_CALLS)], { historyDir: dir, logger: false });
    fs.writeFileSync(path.join(dir, 't1.jsonl'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0x0a, 0x7b, 0x0a]));
    const { code, stdout, stderr } = await runCli('inspect', dir);
    expect(code).toBe(2);
    expect(stdout).toMatch(/^ {2}t1 +unreadable +\$0\.0000 {2}.*t1\.jsonl/m);
    expect(stderr).toMatch(/^agent-sm: error: .*t1\.jsonl/);
  });

  it('a folder with no batch in it is an error naming it; --follow on a folder points to watch', async () => {
    const empty = await runCli('inspect', dir);
    expect(empty).toMatchObject({ code: 2, stdout: '' });
    expect(empty.stderr).toMatch(/holds no batch: no batch\.json and no history files/);
    const follow = await runCli('inspect', '--follow', dir);
    expect(follow.code).toBe(2);
    expect(follow.stderr).toMatch(/use watch <folder>/);
  });
});

describe('<folder> <runId> where a command takes a file', () => {
  it('inspect, show, replay and report read the run of that id; an unknown id or a missing one is exit 2, saying what was expected', async () => {
    await stoppedBatch();
    const inspect = await runCli('inspect', dir, 'boom');
    expect(inspect.code).toBe(0);
    expect(inspect.stdout).toMatch(/FAILED/);
    expect(inspect.stdout).toContain('boom.jsonl');
    const show = await runCli('show', dir, 'ok');
    expect(show.code).toBe(0);
    expect(show.stdout).toContain('done');
    const replay = await runCli('replay', dir, 'boom');
    expect(replay.stderr).toBe('');
    expect(replay.code).toBe(0);
    expect(replay.stdout).toContain(`Replay of ${path.join(dir, 'boom.jsonl')}`);
    const report = await runCli('report', dir, 'ok', '-o', path.join(dir, 'ok.html'));
    expect(report).toEqual({ code: 0, stdout: `${path.join(dir, 'ok.html')}\n`, stderr: '' });
    expect(fs.readFileSync(path.join(dir, 'ok.html'), 'utf8')).toContain('<html');

    const unknown = await runCli('show', dir, 'nope');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/holds no run "nope": expected one of "ok", "boom", "cap", "never1", "never2"/);
    const missing = await runCli('replay', dir);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/is a folder: name a run in it \(agent-sm replay .* <runId>\)/);
    const onFile = await runCli('show', path.join(dir, 'ok.jsonl'), 'ok');
    expect(onFile.code).toBe(2);
    expect(onFile.stderr).toMatch(/is not a folder: a run id \("ok"\) goes with a batch's history folder/);
  });
});

describe('agent-sm inspect <folder> (built executable, stdout a pipe)', () => {
  it('prints the runs failures first and exits 1 with --exit-code', async () => {
    await stoppedBatch();
    const result = runBuiltCli(['inspect', '--exit-code', dir]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(
      /Runs, failures first\n {2}boom +error +\$0\.0000 \(1 call of unknown cost\) {2}sendUserMessage failed/,
    );
    const show = runBuiltCli(['show', dir, 'ok']);
    expect(show.code).toBe(0);
    expect(show.stdout).toContain('done');
  });
});
