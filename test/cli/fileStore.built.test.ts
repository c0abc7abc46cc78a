// `--store file:…` as users run it (the built executable in a child process): a folder of batches
// (FileStore) is a store wherever `--store` is taken — made by `store migrate`, listed by `runs`,
// read by `inspect` and `show`, given as file:///absolute or file:./relative; a URL of no store
// is refused naming what `--store` takes. (The readers' output against files, and approvals:
// storeReaders.built.test.ts and approveStore.built.test.ts run on this store too.)
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { createScriptedAgent, runBatch, type BatchTask } from '../../lib/index';
import { FileStore } from '../../lib/subpaths/batch';
import { buildCli, runBuiltCli } from '../helpers/builtCli';
import { manualClock } from '../helpers/manualClock';

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
const task = (id: string, reply: { text?: string; raw?: unknown }): BatchTask => ({
  id,
  input: 'go',
  agent: () =>
    createScriptedAgent({
      sleep: () => tick(),
      replies: [{ ...reply, usage: { costUsd: 0.25, inputTokens: 1, outputTokens: 1 } }],
    }),
});

beforeAll(() => buildCli(), 120_000);
let work: string;
beforeEach(() => (work = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-file-store-'))));
afterEach(() => fs.rmSync(work, { recursive: true, force: true }));

describe('agent-sm --store file:… (built executable)', () => {
  it('store migrate makes the folder; runs lists its batches’ runs, filtered; inspect and show read one', async () => {
    const root = path.join(work, 'runs');
    const url = pathToFileURL(root).href;
    expect(runBuiltCli(['store', 'migrate', url])).toEqual({ code: 0, stdout: `${url}: ready\n`, stderr: '' });
    expect(fs.statSync(root).isDirectory()).toBe(true);
    expect(runBuiltCli(['runs', '--store', url]).stdout).toBe(`No runs in ${url} match.\n`);

    const options = { logger: false as const, sleep: () => tick(), clock: manualClock(Date.now()).now };
    const store = new FileStore(root);
    await runBatch([task('ok', { text: 'done' }), task('bad', { raw: 'not a response' })], {
      ...options,
      store,
      batchId: 'night',
    });
    await runBatch([task('later', { text: 'done' })], { ...options, store, batchId: 'morning' });
    // Each batch is a folder as a historyDir batch's: the folder readers take it as it is.
    expect(runBuiltCli(['report', path.join(root, 'night'), '-o', path.join(work, 'night.html')]).code).toBe(0);

    const all = runBuiltCli(['runs', '--store', url, '--json']);
    expect({ code: all.code, stderr: all.stderr }).toEqual({ code: 0, stderr: '' });
    const rows = JSON.parse(all.stdout) as Array<{ batchId: string; runId: string; outcome: string; calls: number }>;
    expect(rows.map((r) => `${r.batchId}/${r.runId}:${r.outcome}:${r.calls}`).sort()).toEqual([
      'morning/later:end_of_turn:1',
      'night/bad:error:1',
      'night/ok:end_of_turn:1',
    ]);
    const errors = runBuiltCli(['runs', '--store', url, '--failed']);
    expect(errors.stdout).toMatch(/\nnight +bad +error +\$0\.0000 \(\+1 call of unknown cost\) /);
    expect(errors.stdout).toMatch(/\n1 run, \$0\.\d{4} billed, and 1 LLM call of unknown cost \([^\n]*\), 1 call\n$/);

    // file: and a path from the working folder names the same store.
    const relative = runBuiltCli(['runs', '--store', 'file:./runs', '--batch', 'morning', '--json'], { cwd: work });
    expect((JSON.parse(relative.stdout) as Array<{ runId: string }>).map((r) => r.runId)).toEqual(['later']);

    const inspected = runBuiltCli(['inspect', '--store', url, 'night', 'bad']);
    expect(inspected.code).toBe(0);
    expect(inspected.stdout).toContain(`${url} run bad of batch night`);
    const shown = runBuiltCli(['show', '--store', url, 'night', 'ok']);
    expect({ code: shown.code, stderr: shown.stderr }).toEqual({ code: 0, stderr: '' });
    expect(shown.stdout).toContain('done');
  });

  it('refuses a URL of no store, and a file: URL with no folder, saying what --store takes', () => {
    for (const [url, said] of [
      [
        's3://bucket/runs',
        'expected a store URL, file:///path (a folder of batches) or postgres://user@host:port/database',
      ],
      ['runs', 'expected a store URL, file:///path (a folder of batches) or postgres://user@host:port/database'],
      ['file:', 'expected a folder after it, file:///absolute/path or file:./relative/path'],
    ]) {
      const refused = runBuiltCli(['runs', '--store', url!]);
      expect({ code: refused.code, stdout: refused.stdout }).toEqual({ code: 2, stdout: '' });
      expect(refused.stderr).toContain(said!);
    }
  });
});
