import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startOpenAIChatServer } from '../../examples/servers/openaiChatServer';
import { startOpenAIResponsesServer } from '../../examples/servers/openaiResponsesServer';
import { buildCli, runBuiltCli } from './builtCli';
import { batchChild } from './killableBatch';

// One framework's tool approvals in a folder batch, answered from the terminal: ten tasks in
// another process (a fixture of test/fixtures/batch/ that prints "parked <id>", "finished <id>",
// "ran deploy <id>" and the report), four of which call `deploy`, which needs approval. Each of
// those parks in AwaitingApproval without holding a slot; `agent-sm approvals` lists it; two are
// approved and two denied with the built CLI, and each goes on as the same run through the
// framework's own resume. Then the same with a SIGKILL while parked, the answers given while no
// batch runs, and a resume: no request reaches the server twice, every task is reported once.
// The frameworks' tests differ only in their fixture, their server and where a request carries
// its conversation.

export const IDS = Array.from({ length: 10 }, (_, i) => `t${i}`);
export const DEPLOYING = ['t1', 't3', 't5', 't7'];
const OTHERS = IDS.filter((id) => !DEPLOYING.includes(id));
/** Every deploying run parked and every other run ended: nothing is in flight. */
const SETTLED = new RegExp(
  [
    ...DEPLOYING.map((id) => `(?=[\\s\\S]*^parked ${id}$)`),
    ...OTHERS.map((id) => `(?=[\\s\\S]*^finished ${id}$)`),
  ].join(''),
  'm',
);
/** Every deploying run parked (again, in a resumed batch). */
const PARKED_AGAIN = new RegExp(DEPLOYING.map((id) => `(?=[\\s\\S]*^parked ${id}$)`).join(''), 'm');
const REPORT = /^(\{"runs".*\})$/m;

/** A local server of the framework's wire protocol, as the tests read it. */
export interface ApprovalServer {
  baseURL: string;
  readonly exchanges: ReadonlyArray<{ body: unknown }>;
  readonly rejected: readonly unknown[];
  close(): Promise<void>;
}

export interface ApprovalBatchCase {
  /** The describe block's name. */
  name: string;
  /** The child's fixture in test/fixtures/batch/, and its arguments after the folder and the server's URL. */
  fixture: string;
  args?: readonly string[];
  /** Packages the child is bundled against under other names (another major of an SDK). */
  alias?: Record<string, string>;
  /** A server that answers each task's first request with `ls` (and `deploy` for `DEPLOYING`), then with text. */
  server(): Promise<ApprovalServer>;
  /** The part of a request's body that carries the conversation (`messages`, `input`). */
  conversation(body: unknown): unknown;
  /**
   * Also the test of a batch killed while parked and unanswered, resumed with no `resumeTools`,
   * killed and resumed again: the same waits come back each time (a fixture whose tools ask
   * inside themselves needs their question journaled for it).
   */
  unansweredKill?: boolean;
  /** The waiting tool asks inside itself (a LangGraph `interrupt()`): its question is journaled as asked before the run parks. */
  asksInTool?: boolean;
}

/** One folder for the test file's batches and bundles (a fixture is bundled once per file, there). */
let work: string | undefined;

/** The two tests of `c`: answered while the batch runs, and across a SIGKILL while parked. Call it at a file's top level. */
export function approvalBatchTests(c: ApprovalBatchCase): void {
  if (work === undefined) {
    const made = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-approve-'));
    work = made;
    afterAll(() => fs.rmSync(made, { recursive: true, force: true }));
  }
  const folder = work;
  describe(c.name, () => {
    jest.setTimeout(120_000);
    let server: ApprovalServer;
    let dir: string;
    let children: Array<{ kill(): void }> = [];
    beforeAll(() => buildCli());
    beforeEach(async () => {
      dir = fs.mkdtempSync(path.join(folder, 'batch-'));
      server = await c.server();
    });
    afterEach(async () => {
      for (const child of children) child.kill();
      children = [];
      await server.close();
    });

    function start(mode?: 'resume') {
      const args = [dir, server.baseURL, ...(c.args ?? []), ...(mode === undefined ? [] : [mode])];
      const child = batchChild(folder, args, c.fixture, c.alias);
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

    /** The conversation of task `id`'s last request, as text. */
    const lastSaid = (id: string): string =>
      JSON.stringify(
        c.conversation(server.exchanges.filter((e) => JSON.stringify(e.body).includes(`task ${id}`)).at(-1)!.body),
      );

    /** The report: every task once, each ended; the deploys that ran; what the model heard; no request twice. */
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
        expect(lastSaid(id)).toContain('not today');
        expect(fs.readFileSync(path.join(dir, `${id}.jsonl`), 'utf8')).toContain('denied: not today');
      }
      for (const id of ['t1', 't5']) expect(lastSaid(id)).toContain(`deployed to prod-${id}`);
      for (const id of DEPLOYING) {
        const file = fs.readFileSync(path.join(dir, `${id}.jsonl`), 'utf8');
        expect(file).toContain('"to":"AwaitingApproval"');
        expect(file).toContain('"from":"AwaitingApproval","to":"RunningTool"');
      }
      expect(runBuiltCli(['approvals', dir]).stdout).toBe(
        `agent-sm: no run of the batch in ${dir} waits for approval\n`,
      );
    }

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

    if (c.unansweredKill === true)
      it('killed while parked and unanswered, resumed with no resumeTools (twice): the same waits come back, then the answers go on, nothing sent or run twice', async () => {
        const first = start();
        await first.seen(SETTLED);
        first.child.kill();
        await first.child.exited;
        expectWaiting(false);
        for (let cut = 0; cut < 2; cut += 1) {
          const resumed = start('resume');
          await resumed.seen(PARKED_AGAIN);
          expectWaiting(true);
          if (cut === 0) {
            resumed.child.kill();
            await resumed.child.exited;
            expectWaiting(false);
            continue;
          }
          expect(resumed.child.stdout()).not.toContain('ran deploy');
          // No model call sent again to park again: 16 requests, one a task and a second for the six others.
          expect(server.exchanges).toHaveLength(16);
          for (const id of DEPLOYING) {
            const file = fs.readFileSync(path.join(dir, `${id}.jsonl`), 'utf8');
            if (c.asksInTool === true) expect(file).toContain('"asked":true');
            expect(file).toContain('"to":"AwaitingApproval"');
          }
          answerFour();
          await expectEnded(resumed);
        }
      });
  });
}

/** The Chat Completions server of `ApprovalBatchCase.server`; `show` writes a tool result into the answer's text. */
export async function chatApprovalServer(show: (content: unknown) => string): Promise<ApprovalServer> {
  return startOpenAIChatServer({
    respond: (body: { messages: Array<{ role: string; content: unknown }> }) => {
      const user = body.messages.find((m) => m.role === 'user');
      const id = String(user?.content).replace(/^task /, '');
      const results = body.messages.filter((m) => m.role === 'tool');
      if (results.length > 0) return { content: `${id} done: ${results.map((m) => show(m.content)).join(' | ')}` };
      return {
        toolCalls: [
          { id: 'c1', name: 'ls', arguments: '{"dir":"."}' },
          ...(DEPLOYING.includes(id) ? [{ id: 'c2', name: 'deploy', arguments: `{"target":"prod-${id}"}` }] : []),
        ],
      };
    },
  });
}

type ResponsesItem = { type?: string; role?: string; content?: unknown; output?: unknown };

/** The Responses server of `ApprovalBatchCase.server` (the Agents SDK's): `ls` (and `deploy` for `DEPLOYING`), then text. */
export async function responsesApprovalServer(): Promise<ApprovalServer> {
  return startOpenAIResponsesServer({
    respond: (body: { input: string | ResponsesItem[] }) => {
      const items: ResponsesItem[] =
        typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : body.input;
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
}
