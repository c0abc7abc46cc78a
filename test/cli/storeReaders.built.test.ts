// Every reading command of `agent-sm`, as users run it (the built executable in a child
// process), gives the same output for the same run read from its history file and from each
// store (`--store URL <batchId> <runId>`: PostgreSQL, and a folder of batches by a file: URL):
// the run is written to each by the same batch.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { createScriptedAgent, runBatch, type BatchOptions, type BatchTask } from '../../lib/index';
import { PostgresStore } from '../../lib/integrations/postgres';
import { FileStore } from '../../lib/subpaths/batch';
import { buildCli, buildLibrary, runBuiltCli } from '../helpers/builtCli';
import { manualClock } from '../helpers/manualClock';
import { PG_URL, testSchema, type TestSchema } from '../helpers/postgres';

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
const COST = { costUsd: 0.01, inputTokens: 10, outputTokens: 5 };
const tasks = (): BatchTask[] => [
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
  {
    id: 'bad',
    input: 'go',
    agent: () => createScriptedAgent({ sleep: () => tick(), replies: [{ raw: 'not a response' }] }),
  },
];

beforeAll(() => {
  buildCli();
  buildLibrary({ index: 'lib/index.ts', 'postgres/index': 'lib/integrations/postgres/index.ts' });
}, 120_000);

let db: TestSchema;
let pgUrl: string;
let dir: string;
/** The folder of batches a file: URL names. */
let root: string;
beforeAll(async () => {
  db = await testSchema();
  pgUrl = `${PG_URL}?options=${encodeURIComponent(`-c search_path=${db.schema}`)}`;
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-readers-'));
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-readers-store-'));
  // The same batch, with the same clock, to files and to each store: the same lines.
  const base = (): BatchOptions => ({ logger: false, sleep: () => tick(), clock: manualClock(1_700_000_000_000).now });
  await runBatch(tasks(), { ...base(), historyDir: dir });
  await runBatch(tasks(), { ...base(), store: new FileStore(root), batchId: 'night' });
  const store = new PostgresStore(pgUrl, { schema: db.schema });
  try {
    await runBatch(tasks(), { ...base(), store, batchId: 'night' });
  } finally {
    await store.close();
  }
});
afterAll(async () => {
  await db.drop();
  fs.rmSync(dir, { recursive: true, force: true });
  fs.rmSync(root, { recursive: true, force: true });
});

/** A store the batch was written to: its URL, and how it names batch night and its runs. */
interface StoreCase {
  url: () => string;
  /** The names a run gets: as one run read (`--store URL batch run`), and as a run of the batch read (a folder store names its file). */
  run: (id: string) => string[];
  batch: () => string;
}
const STORES: Array<[string, StoreCase]> = [
  [
    'PostgreSQL',
    {
      url: () => pgUrl,
      run: (id) => [`postgres://127.0.0.1:5432/postgres run ${id} of batch night`],
      batch: () => 'postgres://127.0.0.1:5432/postgres batch night',
    },
  ],
  [
    'a folder of batches (file:)',
    {
      url: () => pathToFileURL(root).href,
      run: (id) => [`${pathToFileURL(root).href} run ${id} of batch night`, path.join(root, 'night', `${id}.jsonl`)],
      batch: () => `${pathToFileURL(root).href} batch night`,
    },
  ],
];

describe.each(STORES)('the reading commands on %s and on files', (_label, store) => {
  /** `args` on the run's file and on the store, with the store's name for the run put in place of the file's path. */
  function both(args: (target: string[]) => string[], id: string) {
    const file = path.join(dir, `${id}.jsonl`);
    const onFile = runBuiltCli(args([file]));
    const onStore = runBuiltCli(args(['--store', store.url(), 'night', id]));
    const named = (text: string): string => store.run(id).reduce((t, name) => t.split(name).join(file), text);
    return { onFile, onStore: { ...onStore, stdout: named(onStore.stdout), stderr: named(onStore.stderr) } };
  }

  it.each([
    ['validate', (t: string[]) => ['validate', ...t]],
    ['validate --json', (t: string[]) => ['validate', '--json', ...t]],
    ['inspect', (t: string[]) => ['inspect', ...t]],
    ['inspect --json', (t: string[]) => ['inspect', '--json', ...t]],
    ['show', (t: string[]) => ['show', ...t]],
    ['replay', (t: string[]) => ['replay', ...t]],
    ['replay --json --budget', (t: string[]) => ['replay', '--json', ...t, '--budget', 'maxLlmCalls=1']],
    ['replay --stall', (t: string[]) => ['replay', ...t, '--stall', 'k=3']],
    ['export otlp', (t: string[]) => ['export', 'otlp', ...t]],
  ])('%s prints the same for the run that ended well and the one that failed', (_, args) => {
    for (const id of ['ok', 'bad']) {
      const { onFile, onStore } = both(args, id);
      expect(onStore).toEqual(onFile);
      expect(onFile.stdout + onFile.stderr).not.toBe('');
      expect(onFile.stderr).not.toMatch(/missing|unknown option/);
    }
  });

  it('report writes the same page', () => {
    for (const id of ['ok', 'bad']) {
      const pages = { file: path.join(dir, `${id}-file.html`), store: path.join(dir, `${id}-store.html`) };
      const { onFile, onStore } = both((t) => ['report', ...t, '-o', t.length === 1 ? pages.file : pages.store], id);
      expect({ ...onFile, stdout: '' }).toEqual({ ...onStore, stdout: '' });
      expect([onFile.stdout, onStore.stdout]).toEqual([`${pages.file}\n`, `${pages.store}\n`]);
      const page = store
        .run(id)
        .reduce((t, name) => t.split(name).join(path.join(dir, `${id}.jsonl`)), fs.readFileSync(pages.store, 'utf8'));
      expect(page).toBe(fs.readFileSync(pages.file, 'utf8'));
    }
    // Without -o, the page of a store's run goes to <runId>.html in the working folder.
    const cwd = fs.mkdtempSync(path.join(dir, 'cwd-'));
    expect(runBuiltCli(['report', '--store', store.url(), 'night', 'ok'], { cwd })).toMatchObject({
      code: 0,
      stdout: 'ok.html\n',
    });
    expect(fs.existsSync(path.join(cwd, 'ok.html'))).toBe(true);
  });

  it("report without a run id writes the batch's page, as for its folder", () => {
    const pages = { file: path.join(dir, 'batch-file.html'), store: path.join(dir, 'batch-store.html') };
    const onFile = runBuiltCli(['report', dir, '-o', pages.file]);
    const onStore = runBuiltCli(['report', '--store', store.url(), 'night', '-o', pages.store]);
    expect(onFile).toEqual({ code: 0, stdout: `${pages.file}\n`, stderr: '' });
    expect(onStore).toEqual({ code: 0, stdout: `${pages.store}\n`, stderr: '' });
    // The page differs only in the names of the batch and its runs.
    let page = fs.readFileSync(pages.store, 'utf8');
    for (const id of ['ok', 'bad'])
      for (const name of store.run(id)) page = page.split(name).join(path.join(dir, `${id}.jsonl`));
    page = page.split(store.batch()).join(dir);
    const folderPage = fs.readFileSync(pages.file, 'utf8');
    expect(page).toBe(folderPage);
    // Both runs are on it, the failed one first with why.
    expect(folderPage).toContain('not a response');
    // Without -o, the page goes to <batchId>.html in the working folder; a batch the store does not hold is named.
    const cwd = fs.mkdtempSync(path.join(dir, 'cwd-'));
    expect(runBuiltCli(['report', '--store', store.url(), 'night'], { cwd })).toMatchObject({
      code: 0,
      stdout: 'night.html\n',
    });
    expect(fs.readFileSync(path.join(cwd, 'night.html'), 'utf8')).toBe(fs.readFileSync(pages.store, 'utf8'));
    expect(runBuiltCli(['report', '--store', store.url(), 'day'], { cwd })).toEqual({
      code: 2,
      stdout: '',
      stderr: `agent-sm: error: ${store.batch().replace(/ night$/, ' day')}: no such batch in the store\n`,
    });
  });

  it('names a run the store does not hold, and asks for a run id', () => {
    expect(runBuiltCli(['validate', '--store', store.url(), 'night', 'nope'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('no such run in the store') as unknown,
    });
    expect(runBuiltCli(['replay', '--store', store.url(), 'night'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--store reads one run') as unknown,
    });
  });
});
