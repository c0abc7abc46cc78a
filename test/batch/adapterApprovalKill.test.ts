// An approval answer is taken exactly once across a crash, for adapter runs in a folder batch
// (test/fixtures/batch/adapterApprovalKill.ts in another process: the ready-made OpenAI Chat loop
// with the real openai client against the local server, answered with the built CLI), as it is
// for the framework mirrors (mirrorAISDK.approvalKill.test.ts): the answer is journaled (an
// `approval` line) when the run takes it, before the tool runs, and a resumed run takes it from
// the journal instead of asking again; an approved tool cut off while running follows the
// resume's tool policy. Killed with SIGKILL at moments the test sees, never after a sleep.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startOpenAIChatServer, type OpenAIChatServer } from '../../examples/servers/openaiChatServer';
import { buildCli, runBuiltCli } from '../helpers/builtCli';
import { batchChild } from '../helpers/killableBatch';

jest.setTimeout(120_000);
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-adapter-approve-kill-'));
let server: OpenAIChatServer;
let dir: string;
/** While true, the server never answers a request that carries tool results (its sender is killed). */
let holdResults = false;
let children: Array<{ kill(): void }> = [];
beforeAll(() => buildCli());
beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(work, 'batch-'));
  holdResults = false;
  server = await startOpenAIChatServer({
    respond: (body: { messages: Array<{ role: string; content: unknown }> }) => {
      const id = String(body.messages.find((m) => m.role === 'user')?.content).replace(/^task /, '');
      const results = body.messages.filter((m) => m.role === 'tool');
      if (results.length > 0) {
        if (holdResults) return new Promise<never>(() => undefined);
        return { content: `${id} done: ${results.map((m) => JSON.stringify(m.content)).join(' | ')}` };
      }
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
  const child = batchChild(work, [dir, server.baseURL, phase, ...ids], 'adapterApprovalKill');
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

/** Settles with `why` after `ms`: bounds a wait for what a broken run never does (the test fails saying so, not at jest's timeout). */
function after(ms: number, why: string): Promise<string> {
  return new Promise((resolve) => setTimeout(() => resolve(why), ms).unref());
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

const bodies = (): string[] => server.exchanges.map((e) => JSON.stringify(e.body));

function lastRequestOf(id: string): string {
  return bodies()
    .filter((b) => b.includes(`task ${id}`))
    .at(-1)!;
}

/** No request was sent twice: the first response was served from the journal, not asked for again. */
function expectNoRequestTwice(count: number): void {
  expect(new Set(bodies()).size).toBe(bodies().length);
  expect(bodies()).toHaveLength(count);
  expect(server.rejected).toEqual([]);
}

/** Runs `one` in a batch, approves its deploy from the CLI, and kills the batch while the deploy runs. */
async function killedWhileTheApprovedToolRuns(): Promise<void> {
  const first = start('block', ['one']);
  await first.seen(/^parked one$/m);
  expect(cli(['approve', dir, 'one'])).toContain('approved 1 call of run one: c2 (deploy)');
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
  expect(cli(['approvals', dir])).toBe(`agent-sm: no run of the batch in ${dir} waits for approval\n`);
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
    holdResults = true;
    const first = start('block', ['one']);
    await first.seen(/^parked one$/m);
    expect(cli(['deny', dir, 'one', '--reason', 'not one'])).toContain('denied 1 call of run one: c2 (deploy)');
    // The denial went on to the model, whose answer never comes.
    await until(
      () => (bodies().some((b) => b.includes('not one')) ? true : undefined),
      after(30_000, 'the denial never reached the model'),
    );
    expect(approvalLines('one')).toMatchObject([{ callId: 'c2', approved: false, reason: 'not one' }]);
    first.child.kill();
    await first.child.exited;
    holdResults = false;
    const resumed = start('resume', ['one']);
    const report = await reportOf(resumed, 'one');
    expect(report.runs.map((r) => [r.id, r.outcome])).toEqual([['one', 'end_of_turn']]);
    expect(first.child.stdout() + resumed.child.stdout()).not.toContain('running deploy');
    expect(lastRequestOf('one')).toContain('denied: not one');
    // The first request is not sent again (served from the journal); the held one is, once answered.
    const sent = bodies();
    expect(sent).toHaveLength(3);
    expect(sent[2]).toBe(sent[1]);
    expect(approvalLines('one')).toMatchObject([
      { callId: 'c2', approved: false, reason: 'not one', fromJournal: true },
    ]);
  });

  it('one of two calls answered before the crash: after resume only the other is asked, and the approved deploy runs once', async () => {
    const first = start('block', ['two']);
    await first.seen(/^parked two$/m);
    expect(cli(['approve', dir, 'two', 'c2'])).toContain('approved 1 call of run two: c2 (deploy)');
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
    expect(cli(['deny', dir, 'two', '--reason', 'not c3'])).toContain('denied 1 call of run two: c3 (deploy)');
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
