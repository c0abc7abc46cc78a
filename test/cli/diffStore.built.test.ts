// `agent-sm diff --store URL` (the built executable, in a child process) on batches PostgreSQL
// keeps: two batch ids compared task by task as two folders are, a task of each run against
// run, and a batch the store does not hold named with exit 2.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { PostgresStore } from '../../lib/integrations/postgres';
import { buildCli, buildLibrary, runBuiltCli } from '../helpers/builtCli';
import { runDiffBatch } from '../helpers/diffBatch';
import { PG_URL, testSchema, type TestSchema } from '../helpers/postgres';

let db: TestSchema;
let url: string;
let dir: string;
beforeAll(async () => {
  buildCli();
  buildLibrary({ index: 'lib/index.ts', 'postgres/index': 'lib/integrations/postgres/index.ts' });
  db = await testSchema();
  url = `${PG_URL}?options=${encodeURIComponent(`-c search_path=${db.schema}`)}`;
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-diff-store-'));
  const store = new PostgresStore(url, { schema: db.schema });
  try {
    await runDiffBatch({ store, batchId: 'before' }, 'base');
    await runDiffBatch({ store, batchId: 'again' }, 'base', 11);
    await runDiffBatch({ store, batchId: 'after' }, 'modelFails');
  } finally {
    await store.close();
  }
  await runDiffBatch(path.join(dir, 'before'), 'base');
  await runDiffBatch(path.join(dir, 'after'), 'modelFails');
}, 180_000);
afterAll(async () => {
  await db?.drop();
  if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true });
});

describe('agent-sm diff --store', () => {
  it('two stored batches: the regression with both reasons, as the folders say it; exit 1', () => {
    const stored = runBuiltCli(['diff', '--store', url, 'before', 'after']);
    expect({ code: stored.code, stderr: stored.stderr }).toEqual({ code: 1, stderr: '' });
    const folders = runBuiltCli(['diff', path.join(dir, 'before'), path.join(dir, 'after')]);
    expect(folders.code).toBe(1);
    // The same report, but for where each batch is.
    const body = (text: string): string => text.split('\n').slice(1, -3).join('\n');
    expect(body(stored.stdout)).toBe(body(folders.stdout));
    expect(stored.stdout).toContain(
      '  b   end_of_turn → error  $0.0300 → $0.0100 (3 calls of unknown cost) (-$0.0200)  first differs: response\n' +
        '    A: end_of_turn\n' +
        '    B: sendToolResults failed after 3 attempts: HTTP 503: the model is overloaded\n',
    );
  });

  it('the same batch stored twice is the same: exit 0', () => {
    const out = runBuiltCli(['diff', '--store', url, 'before', 'again']);
    expect({ code: out.code, stderr: out.stderr }).toEqual({ code: 0, stderr: '' });
    expect(out.stdout).toMatch(/^Same: .*batch before and .*batch again ran the same 3 tasks alike/);
  });

  it('a task of each stored batch, run against run', () => {
    const out = runBuiltCli(['diff', '--json', '--store', url, 'before', 'after', 'b']);
    expect({ code: out.code, stderr: out.stderr }).toEqual({ code: 1, stderr: '' });
    const json = JSON.parse(out.stdout) as { kind: string; divergence: { kind: string; b: { text: string } } };
    expect(json.kind).toBe('runs');
    expect(json.divergence.kind).toBe('response');
    expect(json.divergence.b.text).toContain('HTTP 503: the model is overloaded');
  });

  it('a batch the store does not hold: exit 2, naming it', () => {
    const out = runBuiltCli(['diff', '--store', url, 'before', 'nope']);
    expect({ code: out.code, stdout: out.stdout }).toEqual({ code: 2, stdout: '' });
    expect(out.stderr).toMatch(/^agent-sm: error: .*batch nope.*no such batch in the store/);
  });
});
