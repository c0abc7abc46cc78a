// `agent-sm watch --store URL <batchId>` as users run it (the built executable in a child
// process, stdout a pipe; in tmux for the board), against PostgreSQL in a schema of the test's
// own: a batch written into the store while watch polls it, its end, an unknown batch, bad
// poll intervals, and the same output and board as `agent-sm watch <folder>` for the same batch.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createScriptedAgent, runBatch, type BatchOptions, type BatchTask } from '../../lib/index';
import { PostgresStore } from '../../lib/integrations/postgres';
import { buildCli, buildLibrary, CLI, runBuiltCli, startCli, type RunningCli } from '../helpers/builtCli';
import { manualClock } from '../helpers/manualClock';
import { PG_URL, testSchema, type TestSchema } from '../helpers/postgres';
import { openTmuxTerminal } from '../helpers/tmuxTerminal';

const STORE_NAME = 'postgres://127.0.0.1:5432/postgres';
const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

let db: TestSchema;
let url: string;
let dir: string;
let running: RunningCli | undefined;
beforeAll(async () => {
  buildCli();
  buildLibrary({ index: 'lib/index.ts', 'postgres/index': 'lib/integrations/postgres/index.ts' });
  db = await testSchema();
  url = `${PG_URL}?options=${encodeURIComponent(`-c search_path=${db.schema}`)}`;
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-watch-store-'));
}, 120_000);
afterEach(() => {
  running?.child.kill('SIGKILL');
  running = undefined;
});
afterAll(async () => {
  await db.drop();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Scripted agents whose every LLM call waits until the test lets that task's call through. */
function gatedTasks(): { tasks: BatchTask[]; waiting: (id: string) => Promise<void>; release: (id: string) => void } {
  const gates = new Map<string, () => void>();
  const seen = new Map<string, () => void>();
  const waits = new Map<string, Promise<void>>();
  const waiting = (id: string): Promise<void> => {
    if (!waits.has(id)) waits.set(id, new Promise<void>((resolve) => seen.set(id, resolve)));
    return waits.get(id)!;
  };
  const usage = { inputTokens: 1000, outputTokens: 200, costUsd: 0.25 };
  const task = (id: string, reply: { text?: string; error?: string }): BatchTask => ({
    id,
    input: `task ${id}`,
    agent: createScriptedAgent({
      sleep: () =>
        new Promise<void>((resolve) => {
          gates.set(id, resolve);
          void waiting(id);
          seen.get(id)!();
        }),
      replies: [{ ...reply, delayMs: 1, usage }],
    }),
  });
  return {
    tasks: [
      task('alpha', { text: 'done alpha' }),
      task('bravo', { error: 'model overloaded' }),
      task('charlie', { text: 'done charlie' }),
    ],
    waiting,
    release: (id) => gates.get(id)!(),
  };
}

describe('agent-sm watch --store URL <batchId> (built executable)', () => {
  it('shows a batch the store is being written with, run by run, and ends by itself with exit 0 when the batch ends', async () => {
    const { tasks, waiting, release } = gatedTasks();
    const store = new PostgresStore(url, { schema: db.schema });
    const batch = runBatch(tasks, {
      store,
      batchId: 'live',
      concurrency: 2,
      // Reached when alpha ends: charlie is never started, and the batch ends with bravo.
      total: { maxCostUsd: 0.25, strict: false },
      retry: { retries: 0 },
      logger: false,
    });
    try {
      await Promise.all([waiting('alpha'), waiting('bravo')]);
      running = startCli(['watch', '--store', url, 'live', '--poll-ms', '20']);
      await running.seen('alpha: started');
      await running.seen('bravo: started');
      await running.seen('progress: 0/3 finished, 1 pending, $0.0000 spent');

      release('alpha'); // alpha ends its turn, and spends the cap
      await running.seen('alpha: end_of_turn');
      await running.seen('progress: 1/3 finished, 1 pending, $0.2500 spent');
      expect(running.child.exitCode).toBeNull();

      release('bravo'); // bravo's call fails, and the batch ends
      await batch;
      expect(await running.exited()).toBe(0);
      expect(running.stderr()).toBe('');
      expect(running.stdout()).toMatch(/bravo: error in SendingToLLM: .*model overloaded/);
      expect(running.stdout()).not.toContain('charlie');
      // Ended because the batch is over (no writer holds it): charlie is counted skipped.
      expect(running.stdout().trimEnd().split('\n').at(-1)).toMatch(
        /^\d\d:\d\d:\d\d {2}progress: 2\/3 finished, 1 skipped, \$0\.2500 spent \(\$0\.2500 billed, and 1 LLM call of unknown cost \(it failed after the request may have left \(model overloaded\)\)\)$/,
      );
    } finally {
      await batch.catch(() => undefined);
      await store.close();
    }
  }, 90_000);

  it('names a batch the store does not hold: exit 2, one line on stderr, nothing drawn', () => {
    expect(runBuiltCli(['watch', '--store', url, 'nope'])).toEqual({
      code: 2,
      stdout: '',
      stderr: `agent-sm: error: ${STORE_NAME} batch nope: no such batch in the store\n`,
    });
  }, 30_000);

  it.each(['0', '5', '1.5', 'soon', '3600001'])('refuses --poll-ms %s, naming it', (value) => {
    const result = runBuiltCli(['watch', '--store', url, 'live', '--poll-ms', value]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      `agent-sm: error: option '--poll-ms <n>' argument '${value}' is invalid. expected a whole number of milliseconds from 10 to 3600000 (an hour), got "${value}"; see agent-sm watch --help\n`,
    );
  });
});

describe('agent-sm watch: a batch from a store as from its folder', () => {
  const COST = { costUsd: 0.01, inputTokens: 10, outputTokens: 5 };
  const tasks = (): BatchTask[] => [
    {
      id: 'bad',
      input: 'go',
      agent: () => createScriptedAgent({ sleep: () => tick(), replies: [{ raw: 'not a response' }] }),
    },
    {
      id: 'ok',
      input: 'look it up',
      agent: () =>
        createScriptedAgent({
          sleep: () => tick(),
          replies: [
            { toolCalls: [{ id: 'c1', name: 'look', input: { q: 'x' } }], usage: COST },
            { text: 'found', usage: COST },
          ],
          tools: { look: { output: 'seen' } },
        }),
    },
    // Skipped: the cap stops the batch before it.
    { id: 'late', input: 'go', agent: () => createScriptedAgent({ replies: [{ text: 'never' }] }) },
  ];
  let folder: string;
  beforeAll(async () => {
    folder = path.join(dir, 'night');
    // The same batch, with the same clock, to files and to the store: the same lines.
    const base = (): BatchOptions => ({
      logger: false,
      sleep: () => tick(),
      clock: manualClock(1_700_000_000_000).now,
      concurrency: 1,
      total: { maxCostUsd: 0.02, strict: false },
    });
    await runBatch(tasks(), { ...base(), historyDir: folder });
    const store = new PostgresStore(url, { schema: db.schema });
    try {
      await runBatch(tasks(), { ...base(), store, batchId: 'night' });
    } finally {
      await store.close();
    }
  }, 60_000);

  it('prints the same lines, piped', () => {
    const fromFolder = runBuiltCli(['watch', folder]);
    const fromStore = runBuiltCli(['watch', '--store', url, 'night']);
    // Only the progress line's time is the watch's own (the others are the runs').
    const progressTime = (text: string): string => text.replace(/^\d\d:\d\d:\d\d( {2}progress:)/gm, 'hh:mm:ss$1');
    expect({ ...fromStore, stdout: progressTime(fromStore.stdout) }).toEqual({
      ...fromFolder,
      stdout: progressTime(fromFolder.stdout),
    });
    expect(fromFolder.code).toBe(0);
    expect(fromFolder.stdout).toMatch(/bad: started\n.*bad: error in .*\n.*ok: started\n.*ok: end_of_turn\n/);
    // bad's one call answered what is no response: its cost is unknown, never $0.
    expect(fromFolder.stdout).toMatch(
      /progress: 2\/3 finished, 1 skipped, \$0\.0200 spent \(\$0\.0200 billed, and 1 LLM call of unknown cost \([^\n]*\)\)\n$/,
    );
  }, 60_000);

  it('--stay keeps watching a batch that is over, until Ctrl-C', async () => {
    running = startCli(['watch', '--store', url, 'night', '--stay', '--poll-ms', '20']);
    await running.seen('progress: 2/3 finished, 1 skipped');
    // Looked at again and again, and still there.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(running.child.exitCode).toBeNull();
    running.child.kill('SIGINT');
    expect(await running.exited()).toBe(0);
    expect(running.stderr()).toBe('');
  }, 60_000);

  it('draws the same board in a terminal', () => {
    /** The screen `agent-sm watch ...args` leaves when it ends by itself. */
    const board = (args: string[]): string => {
      const terminal = openTmuxTerminal('watch-store', 110, 30, 'bash --norc --noprofile');
      try {
        const quoted = args.map((a) => `'${a}'`).join(' ');
        terminal.tmux(
          'send-keys',
          '-t',
          'w',
          `PS1='$ ' && clear && node ${CLI} watch ${quoted}; echo "EXITED $?"`,
          'Enter',
        );
        const start = Date.now();
        let screen = '';
        while (!/EXITED \d/.test(screen)) {
          if (Date.now() - start > 30_000) throw new Error(`watch did not end; on screen:\n${screen}`);
          execFileSync('sleep', ['0.05']);
          screen = terminal.screen();
        }
        return screen;
      } finally {
        terminal.close();
      }
    };
    const fromFolder = board([folder]);
    const fromStore = board(['--store', url, 'night']);
    // The header names where the batch is, and the watch's time: the rest is the batch's.
    const header = (screen: string, where: string): string =>
      screen
        .split(where)
        .join('<batch>')
        .replace(/ {2}\d\d:\d\d:\d\d {2}\(batch ended\)/, '  hh:mm:ss  (batch ended)');
    expect(header(fromStore, `${STORE_NAME} batch night`)).toBe(header(fromFolder, folder));
    expect(fromFolder).toMatch(/Progress +\[█+░+\] 2\/3 finished · 0 in flight · 1 skipped · 1 failed/);
    expect(fromFolder).toMatch(/Failures \(1\)\n +\d\d:\d\d:\d\d {2}bad: error in /);
    expect(fromFolder).toContain('EXITED 0');
  }, 60_000);
});
