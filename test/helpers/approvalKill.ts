// The set-up of the approval kill tests (an answer is taken exactly once across a SIGKILL): a
// folder batch of `deploy` calls in a child process (a fixture of test/fixtures/batch), the
// local Chat server it calls, answers given with the built CLI, and what the tests read back
// (the run's `approval` journal lines, the waiting calls, the requests the server saw).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startOpenAIChatServer, type OpenAIChatServer } from '../../examples/servers/openaiChatServer';
import { buildCli, runBuiltCli } from './builtCli';
import { batchChild } from './killableBatch';

export type KillPhase = 'block' | 'resume' | 'resume-rerun';

/** Resolves with `check()`'s first defined value, read every 20 ms; rejects with `gone`'s message if it settles first. */
export function until<T>(check: () => T | undefined, gone?: Promise<string>): Promise<T> {
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
export function after(ms: number, why: string): Promise<string> {
  return new Promise((resolve) => setTimeout(() => resolve(why), ms).unref());
}

/**
 * Registers the hooks of one test file (the CLI built once; a new folder and server per test;
 * children killed after each) and gives what its tests use. The server answers `task <id>` with
 * one `deploy` call (`c2`), or two (`c2`, `c3`) for an id starting with `two`, and a request
 * with tool results with `<id> done: …` (never, while `holdResults` is true).
 */
export function approvalKillCase(options: { label: string; fixture: string; alias?: Record<string, string> }) {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), `agent-sm-${options.label}-`));
  let server: OpenAIChatServer | undefined;
  let dir = '';
  let children: Array<{ kill(): void }> = [];
  const state = { holdResults: false };
  beforeAll(() => buildCli());
  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(work, 'batch-'));
    state.holdResults = false;
    server = await startOpenAIChatServer({
      respond: (body: { messages: Array<{ role: string; content: unknown }> }) => {
        const id = String(body.messages.find((m) => m.role === 'user')?.content).replace(/^task /, '');
        const results = body.messages.filter((m) => m.role === 'tool');
        if (results.length > 0) {
          if (state.holdResults) return new Promise<never>(() => undefined);
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
    await server?.close();
  });
  afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

  const theServer = (): OpenAIChatServer => {
    if (server === undefined) throw new Error('the server starts before each test: use it inside one');
    return server;
  };
  const bodies = (): string[] => theServer().exchanges.map((e) => JSON.stringify(e.body));
  const cli = (args: string[]): string => {
    const run = runBuiltCli(args);
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
    return run.stdout;
  };

  const start = (phase: KillPhase, ids: string[]) => {
    const child = batchChild(work, [dir, theServer().baseURL, phase, ...ids], options.fixture, options.alias);
    children.push(child);
    const seen = (pattern: RegExp): Promise<RegExpExecArray> =>
      until(
        () => pattern.exec(child.stdout()) ?? undefined,
        child.exited.then(() => `the batch exited before ${pattern}: ${child.stdout()}${child.stderr()}`),
      );
    return { child, seen };
  };

  return {
    /** This test's batch folder. */
    get dir(): string {
      return dir;
    },
    /** While true, the server never answers a request that carries tool results (its sender is killed). */
    set holdResults(hold: boolean) {
      state.holdResults = hold;
    },
    bodies,
    cli,
    start,
    /** The `approval` journal lines of run `id`'s history file (the current attempt's). */
    approvalLines(id: string): Array<Record<string, unknown>> {
      const file = path.join(dir, `${id}.jsonl`);
      if (!fs.existsSync(file)) return [];
      return fs
        .readFileSync(file, 'utf8')
        .split('\n')
        .filter((l) => l.includes('"type":"approval"'))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
    },
    /** The calls `agent-sm approvals --json` lists, as [run, callId]. */
    waitingCalls(): Array<[string, string]> {
      const listed = JSON.parse(cli(['approvals', dir, '--json'])) as {
        calls: Array<{ run: string; callId: string }>;
      };
      return listed.calls.map((c) => [c.run, c.callId]);
    },
    /** The resumed batch's report, failing by name if the run asks again instead (it would wait for ever). */
    async reportOf(b: ReturnType<typeof start>, id: string) {
      const [, what] = await b.seen(new RegExp(`^(parked ${id}|\\{"runs".*\\})$`, 'm'));
      expect(what).not.toBe(`parked ${id}`);
      return JSON.parse(what!) as { runs: Array<{ id: string; outcome: string }> };
    },
    lastRequestOf(id: string): string {
      return bodies()
        .filter((b) => b.includes(`task ${id}`))
        .at(-1)!;
    },
    /** No request was sent twice: the first response was served from the journal, not asked for again. */
    expectNoRequestTwice(count: number): void {
      expect(new Set(bodies()).size).toBe(bodies().length);
      expect(bodies()).toHaveLength(count);
      expect(theServer().rejected).toEqual([]);
    },
  };
}
