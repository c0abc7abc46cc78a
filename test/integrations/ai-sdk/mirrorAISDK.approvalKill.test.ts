// An approval answer is taken exactly once across a crash, for AI SDK tool approvals in a folder
// batch (test/fixtures/batch/aiSdkApprovalKill.ts in another process, the real @ai-sdk/openai
// client against the local server, answered with the built CLI): the answer is journaled (an
// `approval` line) when the run takes it, before the tool runs, and a resumed run takes it from
// the journal instead of asking again. Killed with SIGKILL at moments the test sees (the tool
// running and held; the answer's line in the file), never after a sleep.
import * as ai from 'ai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startOpenAIChatServer, type OpenAIChatServer } from '../../../examples/servers/openaiChatServer';
import { buildCli, runBuiltCli } from '../../helpers/builtCli';
import { batchChild } from '../../helpers/killableBatch';

/** ai 7 has `isStepCount`: the child is bundled against the major this process runs. */
const ALIAS: Record<string, string> = 'isStepCount' in ai ? { ai: 'ai-7', '@ai-sdk/openai': '@ai-sdk/openai-4' } : {};
const REPORT = /^(\{"runs".*\})$/m;

jest.setTimeout(120_000);
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-ai-approve-kill-'));
let server: OpenAIChatServer;
let dir: string;
let children: Array<{ kill(): void }> = [];
beforeAll(() => buildCli());
beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(work, 'batch-'));
  server = await startOpenAIChatServer({
    respond: (body: { messages: Array<{ role: string; content: unknown }> }) => {
      const id = String(body.messages.find((m) => m.role === 'user')?.content).replace(/^task /, '');
      const results = body.messages.filter((m) => m.role === 'tool');
      if (results.length > 0)
        return { content: `${id} done: ${results.map((m) => JSON.stringify(m.content)).join(' | ')}` };
      const calls = id.startsWith('two') ? ['c2', 'c3'] : ['c2'];
      return {
        toolCalls: calls.map((c) => ({ id: c, name: 'deploy', arguments: `{"target":"prod-${id}-${c}"}` })),
      };
    },
  });
});
afterEach(async () => {
  for (const child of children) child.kill();
  children = [];
  await server.close();
});
afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

function start(phase: 'block' | 'resume' | 'resume-rerun', ids: string[]) {
  const child = batchChild(work, [dir, server.baseURL, phase, ...ids], 'aiSdkApprovalKill', ALIAS);
  children.push(child);
  const seen = (pattern: RegExp): Promise<RegExpExecArray> =>
    until(
      () => pattern.exec(child.stdout()) ?? undefined,
      child.exited.then(() => `the batch exited before ${pattern}: ${child.stdout()}${child.stderr()}`),
    );
  return { child, seen };
}

/** Resolves with `check()`'s first defined value, read every 20 ms; rejects with `gone`'s message if it settles first. */
function until<T>(check: () => T | undefined, gone?: Promise<string>): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setInterval(() => {
      const value = check();
      if (value === undefined) return;
      clearInterval(timer);
      resolve(value);
    }, 20);
    void gone?.then((why) => {
      const value = check();
      clearInterval(timer);
      if (value !== undefined) resolve(value);
      else reject(new Error(why));
    });
  });
}

/** The `approval` journal lines of run `id`'s history file (the current attempt's). */
function approvalLines(id: string): Array<Record<string, unknown>> {
  const file = path.join(dir, `${id}.jsonl`);
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.includes('"type":"approval"'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

function cli(args: string[]): string {
  const run = runBuiltCli(args);
  expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
  return run.stdout;
}

function waitingCalls(): Array<[string, string]> {
  const listed = JSON.parse(cli(['approvals', dir, '--json'])) as { calls: Array<{ run: string; callId: string }> };
  return listed.calls.map((c) => [c.run, c.callId]);
}

/** The resumed batch's report, failing by name if the run asks again instead (it would wait for ever). */
async function reportOf(b: ReturnType<typeof start>, id: string) {
  const [, what] = await b.seen(new RegExp(`^(parked ${id}|\\{"runs".*\\})$`, 'm'));
  expect(what).not.toBe(`parked ${id}`);
  return JSON.parse(what!) as { runs: Array<{ id: string; outcome: string }> };
}

function lastRequestOf(id: string): string {
  return JSON.stringify(server.exchanges.filter((e) => JSON.stringify(e.body).includes(`task ${id}`)).at(-1)!.body);
}

function expectNoRequestTwice(count: number): void {
  const bodies = server.exchanges.map((e) => JSON.stringify(e.body));
  expect(new Set(bodies).size).toBe(bodies.length);
  expect(bodies).toHaveLength(count);
  expect(server.rejected).toEqual([]);
}

/** Runs `one` in a batch, approves its deploy from the CLI, and kills the batch while the deploy runs. */
async function killedWhileTheApprovedToolRuns(): Promise<void> {
  const first = start('block', ['one']);
  await first.seen(/^parked one$/m);
  expect(cli(['approve', dir, 'one', '--by', 'alice'])).toContain('approved 1 call of run one: c2 (deploy)');
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
  expect(cli(['approvals', dir])).toBe(`agent-sm: no run of the batch in ${dir} waits for approval\n`);
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
    expect(cli(['approve', dir, 'two', 'c2'])).toContain('approved 1 call of run two: c2 (deploy)');
    // The running batch took it: its line is in the run's file.
    await until(() => (approvalLines('two').length > 0 ? true : undefined));
    first.child.kill();
    await first.child.exited;
    expect(first.child.stdout()).not.toContain('running deploy');
    // Down: only c3 waits; an answer to c2 is refused by name.
    expect(waitingCalls()).toEqual([['two', 'c3']]);
    const again = runBuiltCli(['approve', dir, 'two', 'c2']);
    expect(again.code).toBe(2);
    // Its answer is journaled: the error says it was answered (and how), not that the call is unknown.
    expect(again.stderr).toMatch(
      /^agent-sm: error: call c2 of run two was answered already \(approved by \S+ at \d{4}-\d\d-\d\dT[\d:.]+Z\): the run has taken it; it waits on c3 still\n$/,
    );

    const resumed = start('resume', ['two']);
    await resumed.seen(/^parked two$/m);
    expect(waitingCalls()).toEqual([['two', 'c3']]);
    expect(cli(['deny', dir, 'two', '--reason', 'not c3', '--by', 'bob'])).toContain(
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
