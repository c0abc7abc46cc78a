// examples/observe-a-loop.ts as users run it: `tsx examples/observe-a-loop.ts <tasks>` in a child
// process, its own loop on the real `openai` client (default retries) pointed at the local Chat
// Completions server. It is killed mid-batch with SIGKILL while calls are in flight, run again
// with --resume, and: every task is reported once, no call answered before the kill is sent
// again, and what the server billed over both processes stays under the strict $0.01 cap.
// The README's first example is that file.
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { VERSION as OPENAI_VERSION } from 'openai/version';
import { startOpenAIChatServer, type OpenAIChatServer } from '../../examples/servers/openaiChatServer';

const ROOT = path.join(__dirname, '..', '..');
const EXAMPLE = path.join(ROOT, 'examples', 'observe-a-loop.ts');
const openaiMajor = Number(OPENAI_VERSION.split('.')[0]);
const TSCONFIG = path.join(ROOT, openaiMajor >= 7 ? 'tsconfig.v7.json' : 'tsconfig.json');
const TASKS = Array.from({ length: 20 }, (_, i) => `Which files are in the current folder? (ask ${i + 1})`);
const CONCURRENCY = 4;
/** gpt-4o-mini's price, as the example prices it. */
const usdOf = (u: { prompt_tokens: number; completion_tokens: number }): number =>
  (u.prompt_tokens * 0.15 + u.completion_tokens * 0.6) / 1e6;

function start(
  cwd: string,
  baseURL: string,
  args: string[],
): { child: ChildProcess; done: Promise<{ code: number | null; stdout: string; stderr: string }> } {
  // One process (tsx as a loader, not its CLI, which runs the file in a child of its own): the kill reaches the batch.
  const child = spawn(process.execPath, ['--import', pathToFileURL(require.resolve('tsx')).href, EXAMPLE, ...args], {
    cwd,
    env: { ...process.env, OPENAI_BASE_URL: baseURL, OPENAI_API_KEY: 'sk-local', TSX_TSCONFIG_PATH: TSCONFIG },
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
  return { child, done };
}

describe(`examples/observe-a-loop (openai ${openaiMajor})`, () => {
  let dir: string;
  let server: OpenAIChatServer;
  /** The first process's requests are answered up to this many; later ones wait (in flight) for the kill. */
  let answerUpTo = Infinity;
  let held = 0;
  const answered: string[] = [];
  let billedUsd = 0;
  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'observe-a-loop-'));
    fs.writeFileSync(path.join(dir, 'notes.md'), '# notes\n');
    server = await startOpenAIChatServer({
      respond(body: { messages: { role: string; content?: string }[]; max_completion_tokens: number }, index) {
        if (index >= answerUpTo) {
          held += 1;
          return { content: 'never sent', delayMs: 600_000 };
        }
        const usage = {
          prompt_tokens: Math.ceil(JSON.stringify(body).length / 4),
          completion_tokens: body.max_completion_tokens,
        };
        billedUsd += usdOf(usage);
        answered.push(JSON.stringify(body.messages));
        const last = body.messages.at(-1)!;
        if (last.role !== 'tool')
          return { content: 'Let me look.', toolCalls: [{ name: 'list_files', arguments: '{"path":"."}' }], usage };
        return { content: `The folder holds ${String(last.content).split('\n').join(' and ')}.`, usage };
      },
    });
  });
  afterEach(async () => {
    await server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('is killed mid-batch, resumed, pays for no answered call again, and keeps its strict cap', async () => {
    answerUpTo = 10;
    const first = start(dir, server.baseURL, TASKS);
    // Every slot's next call waits at the server: each answer before it reached its run's file.
    for (let waited = 0; held < CONCURRENCY; waited += 50) {
      if (waited > 60_000) throw new Error(`only ${held} calls in flight after 60 s: ${(await first.done).stderr}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    first.child.kill('SIGKILL');
    await first.done;
    const before = answered.length;
    expect(before).toBe(10);
    answerUpTo = Infinity;

    const second = await start(dir, server.baseURL, ['--resume', ...TASKS]).done;
    // All it logs: the runs the cap stopped.
    for (const line of second.stderr.trimEnd().split('\n'))
      expect(line).toMatch(/ warn: run 1 ended budget_exceeded: the batch's total budget exceeded/);
    expect(second.code).toBe(0);
    expect(server.rejected).toEqual([]);
    // Every task once, in order.
    const rows = second.stdout.split('\n').filter((l) => /^task-\d+: /.test(l));
    expect(rows.map((r) => r.split(':')[0])).toEqual(TASKS.map((_, i) => `task-${i + 1}`));
    // No request answered before the kill was sent again.
    const again = answered.slice(before).filter((body) => answered.slice(0, before).includes(body));
    expect(again).toEqual([]);
    // The cap held across both processes, and it is what stopped the batch.
    expect(billedUsd).toBeLessThanOrEqual(0.01);
    expect(rows.some((r) => r.endsWith('budget_exceeded'))).toBe(true);
    expect(rows.filter((r) => r.endsWith('end_of_turn')).length).toBeGreaterThan(5);
  }, 120_000);

  it('is the README’s first example, line for line', () => {
    const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    const block = /<!-- runnable -->\n```ts\n(\/\/ npx tsx examples\/observe-a-loop\.ts[\s\S]*?)```/.exec(readme)?.[1];
    expect(block).toBe(fs.readFileSync(EXAMPLE, 'utf8'));
  });
});
