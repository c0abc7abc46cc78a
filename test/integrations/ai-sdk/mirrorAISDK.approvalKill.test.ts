// An approval answer is taken exactly once across a crash, for AI SDK tool approvals in a folder
// batch (test/fixtures/batch/aiSdkApprovalKill.ts in another process, the real @ai-sdk/openai
// client against the local server, answered with the built CLI): the answer is journaled (an
// `approval` line) when the run takes it, before the tool runs, and a resumed run takes it from
// the journal instead of asking again. Killed with SIGKILL at moments the test sees (the tool
// running and held; the answer's line in the file), never after a sleep.
import * as ai from 'ai';
import * as os from 'node:os';
import { runBuiltCli } from '../../helpers/builtCli';
import { approvalKillCase, until } from '../../helpers/approvalKill';

/** ai 7 has `isStepCount`: the child is bundled against the major this process runs. */
const ALIAS: Record<string, string> = 'isStepCount' in ai ? { ai: 'ai-7', '@ai-sdk/openai': '@ai-sdk/openai-4' } : {};
const REPORT = /^(\{"runs".*\})$/m;

jest.setTimeout(120_000);
const k = approvalKillCase({ label: 'ai-approve-kill', fixture: 'aiSdkApprovalKill', alias: ALIAS });
const { start, cli, waitingCalls, approvalLines, reportOf, lastRequestOf, expectNoRequestTwice } = k;

/** Runs `one` in a batch, approves its deploy from the CLI, and kills the batch while the deploy runs. */
async function killedWhileTheApprovedToolRuns(): Promise<void> {
  const first = start('block', ['one']);
  await first.seen(/^parked one$/m);
  expect(cli(['approve', k.dir, 'one', '--by', 'alice'])).toContain('approved 1 call of run one: c2 (deploy)');
  await first.seen(/^running deploy one prod-one-c2$/m);
  // Journaled when taken, before the tool ran.
  expect(approvalLines('one')).toEqual([
    {
      type: 'approval',
      seq: expect.any(Number),
      turn: 1,
      callId: 'c2',
      name: 'deploy',
      approved: true,
      at: expect.any(Number),
      by: 'alice',
    },
  ]);
  first.child.kill();
  await first.child.exited;
  expect(cli(['approvals', k.dir])).toBe(`agent-sm: no run of the batch in ${k.dir} waits for approval\n`);
}

describe('AI SDK approvals across a SIGKILL: an answer is taken exactly once', () => {
  it('approved, its tool running, killed: on resume it is not asked again, and the tool (policy replay) is not run again', async () => {
    await killedWhileTheApprovedToolRuns();
    const resumed = start('resume', ['one']);
    const report = await reportOf(resumed, 'one');
    expect(report.runs.map((r) => [r.id, r.outcome])).toEqual([['one', 'end_of_turn']]);
    expect(resumed.child.stdout()).not.toContain('running deploy');
    // The model hears that the call was cut off, not a second result.
    expect(lastRequestOf('one')).toContain('interrupted');
    expectNoRequestTwice(2);
    expect(approvalLines('one')).toMatchObject([{ callId: 'c2', approved: true, fromJournal: true, by: 'alice' }]);
  });

  it('approved, its tool running, killed: under resumeTools rerun the tool runs again, once, without asking again', async () => {
    await killedWhileTheApprovedToolRuns();
    const resumed = start('resume-rerun', ['one']);
    const report = await reportOf(resumed, 'one');
    expect(report.runs.map((r) => [r.id, r.outcome])).toEqual([['one', 'end_of_turn']]);
    expect(resumed.child.stdout().match(/^running deploy .*$/gm)).toEqual(['running deploy one prod-one-c2']);
    expect(lastRequestOf('one')).toContain('deployed to prod-one-c2');
    expectNoRequestTwice(2);
  });

  it('one of two calls answered before the crash: after resume only the other is asked, and each deploy runs once', async () => {
    const first = start('block', ['two']);
    await first.seen(/^parked two$/m);
    expect(cli(['approve', k.dir, 'two', 'c2'])).toContain('approved 1 call of run two: c2 (deploy)');
    // The running batch took it: its line is in the run's file.
    await until(() => (approvalLines('two').length > 0 ? true : undefined));
    first.child.kill();
    await first.child.exited;
    expect(first.child.stdout()).not.toContain('running deploy');
    // Down: only c3 waits; an answer to c2 is refused by name.
    expect(waitingCalls()).toEqual([['two', 'c3']]);
    const again = runBuiltCli(['approve', k.dir, 'two', 'c2']);
    expect(again.code).toBe(2);
    // Its answer is journaled: the error says it was answered (and how), not that the call is unknown.
    expect(again.stderr).toMatch(
      /^agent-sm: error: call c2 of run two was answered already \(approved by \S+ at \d{4}-\d\d-\d\dT[\d:.]+Z\): the run has taken it; it waits on c3 still\n$/,
    );

    const resumed = start('resume', ['two']);
    await resumed.seen(/^parked two$/m);
    expect(waitingCalls()).toEqual([['two', 'c3']]);
    expect(cli(['deny', k.dir, 'two', '--reason', 'not c3', '--by', 'bob'])).toContain(
      'denied 1 call of run two: c3 (deploy)',
    );
    const [json] = await resumed.seen(REPORT);
    const report = JSON.parse(json) as { runs: Array<{ id: string; outcome: string }> };
    expect(report.runs.map((r) => [r.id, r.outcome])).toEqual([['two', 'end_of_turn']]);
    expect(resumed.child.stdout().match(/^running deploy .*$/gm)).toEqual(['running deploy two prod-two-c2']);
    const last = lastRequestOf('two');
    expect(last).toContain('deployed to prod-two-c2');
    expect(last).toContain('not c3');
    expectNoRequestTwice(2);
    // Who answered is journaled with each answer (the login name without --by), and kept across the resume.
    expect(approvalLines('two')).toMatchObject([
      { callId: 'c2', approved: true, fromJournal: true, by: os.userInfo().username },
      { callId: 'c3', approved: false, reason: 'not c3', by: 'bob' },
    ]);
  });
});
