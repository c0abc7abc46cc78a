// `agent-sm approvals|approve|deny <folder>` as the built executable: a folder batch of ten
// scripted tasks in another process, four of which wait for approval of `deploy`, answered
// from the terminal (two approved, two denied) — while it runs, and while it is down after a
// SIGKILL, then resumed. An answer is taken once; a second one, an unknown run or call, a run
// that does not wait: refused by name (exit 2).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { buildCli, runBuiltCli } from '../helpers/builtCli';
import { spawnWatched, type WatchedChild } from '../helpers/watchedChild';

const FIXTURE = 'test/fixtures/batch/approvalBatch.ts';
const DEPLOYING = ['t1', 't3', 't5', 't7'];
const ALL_PARKED = new RegExp(DEPLOYING.map((id) => `(?=[\\s\\S]*^parked ${id}\\n)`).join(''), 'm');
const REPORT = /^(\{"outcomes".*\})\n/m;
/** Who answers when `--by` is left out. */
const LOGIN = os.userInfo().username;

let dir: string;
let batch: WatchedChild['child'] | undefined;
beforeAll(() => buildCli(), 120_000);
beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-approve-'))));
afterEach(() => {
  batch?.kill('SIGKILL');
  batch = undefined;
  fs.rmSync(dir, { recursive: true, force: true });
});

/** The approval batch in its own process: what it printed so far, and a way to wait for more. */
function startBatch(mode?: 'resume'): WatchedChild {
  const started = spawnWatched(FIXTURE, [dir, ...(mode === undefined ? [] : [mode])]);
  batch = started.child;
  return started;
}

/** Approves t1 and t5 and denies t3 and t7 from the built CLI, each exit 0. */
function answerFour(): void {
  for (const [verb, run, ...rest] of [
    ['approve', 't1', 'c2', '--by', 'alice'],
    ['deny', 't3', 'c2', '--reason', 'not today'],
    ['approve', 't5'],
    ['deny', 't7', '--reason', 'not today'],
  ]) {
    const answered = runBuiltCli([verb!, dir, run!, ...rest]);
    expect({ code: answered.code, stderr: answered.stderr }).toEqual({ code: 0, stderr: '' });
    expect(answered.stdout).toContain(
      `agent-sm: ${verb === 'approve' ? 'approved' : 'denied'} 1 call of run ${run}: c2 (deploy); `,
    );
  }
}

/** The report's outcomes, the deploys that ran, and what each run's history told the LLM of a denied call. */
async function expectEnded(b: ReturnType<typeof startBatch>, ranIn: () => string): Promise<void> {
  const [, json] = await b.seen(REPORT);
  const report = JSON.parse(json!) as { outcomes: Record<string, string>; runs: number };
  expect(report.runs).toBe(10);
  expect(report.outcomes).toEqual(Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`t${i}`, 'end_of_turn'])));
  const ran = ranIn()
    .split('\n')
    .filter((l) => l.startsWith('ran deploy'))
    .sort();
  expect(ran).toEqual(['ran deploy t1', 'ran deploy t5']);
  for (const id of ['t3', 't7'])
    expect(fs.readFileSync(path.join(dir, `${id}.jsonl`), 'utf8')).toContain('denied: not today');
  for (const id of ['t1', 't5'])
    expect(fs.readFileSync(path.join(dir, `${id}.jsonl`), 'utf8')).not.toContain('denied:');
  await b.closed;
}

describe('agent-sm approvals | approve | deny <folder> (built executable)', () => {
  it('lists the four calls that wait; two approved and two denied from the terminal reach the batch running in another process', async () => {
    const b = startBatch();
    await b.seen(ALL_PARKED);
    const listed = runBuiltCli(['approvals', dir, '--json']);
    expect(listed.code).toBe(0);
    const waiting = JSON.parse(listed.stdout) as {
      running: boolean;
      calls: Array<{ run: string; callId: string; tool: string; input: unknown; waitedMs: number }>;
    };
    expect(waiting.running).toBe(true);
    expect(waiting.calls.map(({ run, callId, tool, input }) => ({ run, callId, tool, input }))).toEqual(
      DEPLOYING.map((id) => ({ run: id, callId: 'c2', tool: 'deploy', input: { target: `prod-${id}` } })),
    );
    for (const call of waiting.calls) expect(call.waitedMs).toBeGreaterThanOrEqual(0);
    const text = runBuiltCli(['approvals', dir]);
    expect(text.stdout).toContain('4 tool calls wait for approval in');
    expect(text.stdout).toMatch(/^ {2}t3 {2}c2 {2}deploy \{"target":"prod-t3"\} {2}waiting /m);

    answerFour();
    // A second answer to a call: refused, whether the batch took the first yet or not.
    const again = runBuiltCli(['approve', dir, 't1', 'c2']);
    expect({ code: again.code, stdout: again.stdout }).toEqual({ code: 2, stdout: '' });
    expect(again.stderr).toMatch(/^agent-sm: error: call c2 of run t1 was answered already \(approved by alice at /);
    await expectEnded(b, b.out);
    // Once the run went on, still refused, and saying so.
    const late = runBuiltCli(['deny', dir, 't3']);
    expect(late.code).toBe(2);
    // Given without --by: the login name answered.
    expect(late.stderr).toContain(`call c2 of run t3 was answered already (denied by ${LOGIN} at `);
    expect(late.stderr).toContain('the run has gone on with it; nothing waits for another answer');
  }, 90_000);

  it('a batch killed while parked, answered while down, then resumed, takes the answers and asks none again', async () => {
    const first = startBatch();
    await first.seen(ALL_PARKED);
    first.child.kill('SIGKILL');
    await first.closed;
    const listed = runBuiltCli(['approvals', dir]);
    expect(listed.stdout).toContain('4 tool calls wait for approval in');
    expect(listed.stdout).toContain('(no batch runs there now)');
    // The batch's page lists the calls that wait first, before its failures.
    const pageFile = path.join(os.tmpdir(), `agent-sm-approve-${process.pid}.html`);
    try {
      expect(runBuiltCli(['report', dir, '-o', pageFile]).code).toBe(0);
      const html = fs.readFileSync(pageFile, 'utf8');
      expect(html).toContain('<h2>Waiting for approval <span class="count" id="waiting-count">4 calls</span></h2>');
      expect(html.indexOf('id="waiting"')).toBeLessThan(html.indexOf('<h2>Failures'));
      for (const id of DEPLOYING)
        expect(html).toMatch(
          new RegExp(
            `<td><a href="#run-\\d+">${id}</a></td><td>c2</td><td>deploy</td><td class="reason"><code>\\{&quot;target&quot;:&quot;prod-${id}&quot;\\}</code></td>`,
          ),
        );
    } finally {
      fs.rmSync(pageFile, { force: true });
    }
    answerFour();
    const again = runBuiltCli(['deny', dir, 't5']);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain(
      'every call run t5 waits on was answered already (c2): an answer is taken once; the batch takes them within a second, or when it resumes',
    );
    const shown = runBuiltCli(['approvals', dir]);
    expect(shown.stdout).toMatch(new RegExp(`^ {2}t5 {2}c2 {2}deploy .* — approved by ${LOGIN}, not taken yet$`, 'm'));
    expect(shown.stdout).toMatch(/^ {2}t1 {2}c2 {2}deploy .* — approved by alice, not taken yet$/m);
    const shownJson = JSON.parse(runBuiltCli(['approvals', dir, '--json']).stdout) as {
      calls: Array<{ run: string; answer?: { approved: boolean; by?: string; taken: boolean } }>;
    };
    expect(shownJson.calls.map((c) => [c.run, c.answer])).toEqual([
      ['t1', expect.objectContaining({ approved: true, by: 'alice', taken: false })],
      ['t3', expect.objectContaining({ approved: false, by: LOGIN, reason: 'not today', taken: false })],
      ['t5', expect.objectContaining({ approved: true, by: LOGIN, taken: false })],
      ['t7', expect.objectContaining({ approved: false, by: LOGIN, taken: false })],
    ]);

    const resumed = startBatch('resume');
    await expectEnded(resumed, resumed.out);
    expect(fs.readdirSync(path.join(dir, 'batch.answers')).filter((f) => !f.endsWith('.taken'))).toEqual([]);
    expect(runBuiltCli(['approvals', dir]).stdout).toBe(`agent-sm: no run of the batch in ${dir} waits for approval\n`);
  }, 90_000);

  it('names what is wrong: an unknown run, an unknown call, a run that does not wait, a folder that is no batch', async () => {
    const b = startBatch();
    await b.seen(ALL_PARKED);
    b.child.kill('SIGKILL');
    await b.closed;
    const unknownRun = runBuiltCli(['approve', dir, 'nope']);
    expect({ code: unknownRun.code, stdout: unknownRun.stdout }).toEqual({ code: 2, stdout: '' });
    expect(unknownRun.stderr).toBe(
      `agent-sm: error: Expected \`run\` to be the id of a run of the batch in ${dir} (t0, t1, t2, t3, t4, t5, t6, t7, t8, t9), got \`nope\` (string)\n`,
    );
    const unknownCall = runBuiltCli(['deny', dir, 't1', 'c9']);
    expect(unknownCall.code).toBe(2);
    expect(unknownCall.stderr).toBe(
      'agent-sm: error: Expected `callId` to be the id of a call run t1 waits on (c2), got `c9` (string)\n',
    );
    const notWaiting = runBuiltCli(['approve', dir, 't0']);
    expect(notWaiting.code).toBe(2);
    expect(notWaiting.stderr).toContain(
      'run t0 does not wait for approval (its history does not end in AwaitingApproval: it went on, ended or has not started)',
    );
    const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-approve-empty-'));
    try {
      const noBatch = runBuiltCli(['approvals', empty]);
      expect(noBatch.code).toBe(2);
      expect(noBatch.stderr).toContain('is not the history folder of a batch');
    } finally {
      fs.rmSync(empty, { recursive: true, force: true });
    }
    expect(fs.existsSync(path.join(dir, 'batch.answers'))).toBe(false);
  }, 90_000);
});
