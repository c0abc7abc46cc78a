// The Agents SDK's tool approvals in a folder batch, answered from the terminal: ten Agents SDK
// tasks in another process (test/fixtures/batch/agentsApprovalBatch.ts, an Agent on the SDK's
// own OpenAIProvider against the local Responses server), four of which call `deploy`
// (`needsApproval`), whose interruption parks the run in AwaitingApproval without holding a slot;
// `agent-sm approvals` lists it, two are approved and two denied with the built CLI, and each
// goes on as the same run through the SDK's resume (`state.approve` / `reject`, `run(agent, state)`).
// Then the same with a SIGKILL while parked, the answers given while no batch runs, and a resume:
// no request reaches the server twice, every task is reported once.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  startOpenAIResponsesServer,
  type OpenAIResponsesServer,
} from '../../../examples/servers/openaiResponsesServer';
import { buildCli, runBuiltCli } from '../../helpers/builtCli';
import { batchChild } from '../../helpers/killableBatch';

const IDS = Array.from({ length: 10 }, (_, i) => `t${i}`);
const DEPLOYING = ['t1', 't3', 't5', 't7'];
const OTHERS = IDS.filter((id) => !DEPLOYING.includes(id));
/** Every deploying run parked and every other run ended: nothing is in flight. */
const SETTLED = new RegExp(
  [
    ...DEPLOYING.map((id) => `(?=[\\s\\S]*^parked ${id}$)`),
    ...OTHERS.map((id) => `(?=[\\s\\S]*^finished ${id}$)`),
  ].join(''),
  'm',
);
const REPORT = /^(\{"runs".*\})$/m;

type Item = { type?: string; role?: string; content?: unknown; output?: unknown };

jest.setTimeout(120_000);
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-agents-approve-'));
let server: OpenAIResponsesServer;
let dir: string;
let children: Array<{ kill(): void }> = [];
beforeAll(() => buildCli());
beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(work, 'batch-'));
  server = await startOpenAIResponsesServer({
    respond: (body: { input: string | Item[] }) => {
      const items: Item[] = typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : body.input;
      const user = items.find((i) => i.role === 'user');
      const text = typeof user?.content === 'string' ? user.content : JSON.stringify(user?.content);
      const id = /task (t\d+)/.exec(text)?.[1] ?? '?';
      const outputs = items.filter((i) => i.type === 'function_call_output');
      if (outputs.length > 0) return { text: `${id} done: ${outputs.map((o) => String(o.output)).join(' | ')}` };
      return {
        toolCalls: [
          { callId: 'c1', name: 'ls', arguments: '{"dir":"."}' },
          ...(DEPLOYING.includes(id) ? [{ callId: 'c2', name: 'deploy', arguments: `{"target":"prod-${id}"}` }] : []),
        ],
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

function start(mode?: 'resume') {
  const child = batchChild(work, [dir, server.baseURL, ...(mode === undefined ? [] : [mode])], 'agentsApprovalBatch');
  children.push(child);
  const seen = (pattern: RegExp): Promise<RegExpExecArray> =>
    new Promise((resolve, reject) => {
      const timer = setInterval(() => {
        const match = pattern.exec(child.stdout());
        if (match !== null) {
          clearInterval(timer);
          resolve(match);
        }
      }, 20);
      void child.exited.then(() => {
        const match = pattern.exec(child.stdout());
        clearInterval(timer);
        if (match !== null) resolve(match);
        else reject(new Error(`the batch exited before ${pattern}: ${child.stdout()}${child.stderr()}`));
      });
    });
  return { child, seen };
}

/** Approves t1 and t5 and denies t3 and t7 from the built CLI, each exit 0. */
function answerFour(): void {
  for (const [verb, run, ...rest] of [
    ['approve', 't1', 'c2'],
    ['deny', 't3', 'c2', '--reason', 'not today'],
    ['approve', 't5'],
    ['deny', 't7', '--reason', 'not today'],
  ]) {
    const answered = runBuiltCli([verb!, dir, run!, ...rest]);
    expect({ code: answered.code, stderr: answered.stderr }).toEqual({ code: 0, stderr: '' });
    expect(answered.stdout).toContain(`1 call of run ${run}: c2 (deploy); `);
  }
}

function expectWaiting(running: boolean): void {
  const listed = runBuiltCli(['approvals', dir, '--json']);
  expect(listed.code).toBe(0);
  const waiting = JSON.parse(listed.stdout) as {
    running: boolean;
    calls: Array<{ run: string; callId: string; tool: string; input: unknown }>;
  };
  expect(waiting.running).toBe(running);
  expect(waiting.calls.map(({ run, callId, tool, input }) => ({ run, callId, tool, input }))).toEqual(
    DEPLOYING.map((id) => ({ run: id, callId: 'c2', tool: 'deploy', input: { target: `prod-${id}` } })),
  );
}

/** The report: every task once, each ended; the deploys that ran; the denials the model heard; no request twice. */
async function expectEnded(b: ReturnType<typeof start>): Promise<void> {
  const [json] = await b.seen(REPORT);
  const report = JSON.parse(json) as { runs: Array<{ id: string; outcome: string; llmCalls: number }> };
  expect(report.runs.map((r) => [r.id, r.outcome, r.llmCalls])).toEqual(IDS.map((id) => [id, 'end_of_turn', 2]));
  expect(
    b.child
      .stdout()
      .split('\n')
      .filter((l) => l.startsWith('ran deploy'))
      .sort(),
  ).toEqual(['ran deploy t1', 'ran deploy t5']);
  const bodies = server.exchanges.map((e) => JSON.stringify(e.body));
  expect(new Set(bodies).size).toBe(bodies.length);
  expect(bodies).toHaveLength(20);
  expect(server.rejected).toEqual([]);
  for (const id of ['t3', 't7']) {
    const last = server.exchanges.filter((e) => JSON.stringify(e.body).includes(`task ${id}`)).at(-1)!;
    expect(JSON.stringify(last.body.input)).toContain('denied: not today');
    expect(fs.readFileSync(path.join(dir, `${id}.jsonl`), 'utf8')).toContain('denied: not today');
  }
  for (const id of ['t1', 't5']) {
    const last = server.exchanges.filter((e) => JSON.stringify(e.body).includes(`task ${id}`)).at(-1)!;
    expect(JSON.stringify(last.body.input)).toContain(`deployed to prod-${id}`);
  }
  for (const id of DEPLOYING) {
    const file = fs.readFileSync(path.join(dir, `${id}.jsonl`), 'utf8');
    expect(file).toContain('"to":"AwaitingApproval"');
    expect(file).toContain('"from":"AwaitingApproval","to":"RunningTool"');
  }
  expect(runBuiltCli(['approvals', dir]).stdout).toBe(`agent-sm: no run of the batch in ${dir} waits for approval\n`);
}

describe('Agents SDK interruptions in a folder batch, answered from the built CLI', () => {
  it('four runs park without a slot, are listed, two approved and two denied reach the running batch', async () => {
    const b = start();
    await b.seen(SETTLED);
    expectWaiting(true);
    answerFour();
    await expectEnded(b);
  });

  it('killed while parked, answered while down, then resumed: the same waits come back, the answers are taken, nothing is asked or sent twice', async () => {
    const first = start();
    await first.seen(SETTLED);
    first.child.kill();
    await first.child.exited;
    expectWaiting(false);
    answerFour();
    const resumed = start('resume');
    await expectEnded(resumed);
  });
});
