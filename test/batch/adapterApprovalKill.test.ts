// An approval answer is taken exactly once across a crash, for adapter runs in a folder batch
// (test/fixtures/batch/adapterApprovalKill.ts in another process: the ready-made OpenAI Chat loop
// with the real openai client against the local server, answered with the built CLI), as it is
// for the framework mirrors (mirrorAISDK.approvalKill.test.ts): the answer is journaled (an
// `approval` line) when the run takes it, before the tool runs, and a resumed run takes it from
// the journal instead of asking again; an approved tool cut off while running follows the
// resume's tool policy. Killed with SIGKILL at moments the test sees, never after a sleep.
import { after, approvalKillCase, until } from '../helpers/approvalKill';

jest.setTimeout(120_000);
const k = approvalKillCase({ label: 'adapter-approve-kill', fixture: 'adapterApprovalKill' });
const { start, cli, waitingCalls, approvalLines, reportOf, lastRequestOf, expectNoRequestTwice } = k;

/** Runs `one` in a batch, approves its deploy from the CLI, and kills the batch while the deploy runs. */
async function killedWhileTheApprovedToolRuns(): Promise<void> {
  const first = start('block', ['one']);
  await first.seen(/^parked one$/m);
  expect(cli(['approve', k.dir, 'one'])).toContain('approved 1 call of run one: c2 (deploy)');
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
    },
  ]);
  first.child.kill();
  await first.child.exited;
  expect(cli(['approvals', k.dir])).toBe(`agent-sm: no run of the batch in ${k.dir} waits for approval\n`);
}

describe('adapter approvals across a SIGKILL: an answer is taken exactly once', () => {
  it('approved, its tool running, killed: on resume it is not asked again, and the tool (policy replay) is not run again', async () => {
    await killedWhileTheApprovedToolRuns();
    const resumed = start('resume', ['one']);
    const report = await reportOf(resumed, 'one');
    expect(report.runs.map((r) => [r.id, r.outcome])).toEqual([['one', 'end_of_turn']]);
    expect(resumed.child.stdout()).not.toContain('running deploy');
    // The model hears that the call was cut off, not a result.
    expect(lastRequestOf('one')).toContain('interrupted');
    expectNoRequestTwice(2);
    expect(approvalLines('one')).toMatchObject([{ callId: 'c2', approved: true, fromJournal: true }]);
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

  it('denied, killed before the model answered: on resume the denial is not asked again, and reaches the model', async () => {
    k.holdResults = true;
    const first = start('block', ['one']);
    await first.seen(/^parked one$/m);
    expect(cli(['deny', k.dir, 'one', '--reason', 'not one'])).toContain('denied 1 call of run one: c2 (deploy)');
    // The denial went on to the model, whose answer never comes.
    await until(
      () => (k.bodies().some((b) => b.includes('not one')) ? true : undefined),
      after(30_000, 'the denial never reached the model'),
    );
    expect(approvalLines('one')).toMatchObject([{ callId: 'c2', approved: false, reason: 'not one' }]);
    first.child.kill();
    await first.child.exited;
    k.holdResults = false;
    const resumed = start('resume', ['one']);
    const report = await reportOf(resumed, 'one');
    expect(report.runs.map((r) => [r.id, r.outcome])).toEqual([['one', 'end_of_turn']]);
    expect(first.child.stdout() + resumed.child.stdout()).not.toContain('running deploy');
    expect(lastRequestOf('one')).toContain('denied: not one');
    // The first request is not sent again (served from the journal); the held one is, once answered.
    const sent = k.bodies();
    expect(sent).toHaveLength(3);
    expect(sent[2]).toBe(sent[1]);
    expect(approvalLines('one')).toMatchObject([
      { callId: 'c2', approved: false, reason: 'not one', fromJournal: true },
    ]);
  });

  it('one of two calls answered before the crash: after resume only the other is asked, and the approved deploy runs once', async () => {
    const first = start('block', ['two']);
    await first.seen(/^parked two$/m);
    expect(cli(['approve', k.dir, 'two', 'c2'])).toContain('approved 1 call of run two: c2 (deploy)');
    // The running batch took it: its line is in the run's file.
    await until(
      () => (approvalLines('two').length > 0 ? true : undefined),
      after(30_000, 'the batch took the answer to c2 and journaled no approval line'),
    );
    first.child.kill();
    await first.child.exited;
    expect(first.child.stdout()).not.toContain('running deploy');
    expect(waitingCalls()).toEqual([['two', 'c3']]);

    const resumed = start('resume', ['two']);
    await resumed.seen(/^parked two$/m);
    expect(waitingCalls()).toEqual([['two', 'c3']]);
    expect(cli(['deny', k.dir, 'two', '--reason', 'not c3'])).toContain('denied 1 call of run two: c3 (deploy)');
    const [json] = await resumed.seen(/^(\{"runs".*\})$/m);
    const report = JSON.parse(json) as { runs: Array<{ id: string; outcome: string }> };
    expect(report.runs.map((r) => [r.id, r.outcome])).toEqual([['two', 'end_of_turn']]);
    // Not answered as cut off: it never started before the crash.
    expect(resumed.child.stdout().match(/^running deploy .*$/gm)).toEqual(['running deploy two prod-two-c2']);
    const last = lastRequestOf('two');
    expect(last).toContain('deployed to prod-two-c2');
    expect(last).toContain('not c3');
    expectNoRequestTwice(2);
    expect(approvalLines('two')).toMatchObject([
      { callId: 'c2', approved: true, fromJournal: true },
      { callId: 'c3', approved: false, reason: 'not c3' },
    ]);
  });
});
