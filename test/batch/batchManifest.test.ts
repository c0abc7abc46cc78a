import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MANIFEST_FILE, readBatchManifest, writeBatchManifest } from '../../lib/batch/keeping/batchManifest';
import { HistoryFileError } from '../../lib/history/HistoryFileError';

let dir: string;
beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-manifest-'))));
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('the batch manifest', () => {
  it('is written whole and read back; a folder without one has none', async () => {
    expect(await readBatchManifest(dir)).toBeUndefined();
    writeBatchManifest(dir, {
      startedAt: 5,
      concurrency: 2,
      limits: { total: { maxCostUsd: 1 } },
      tasks: [{ id: 'a/b', file: 'a_b-1234.jsonl' }],
    });
    expect(fs.readdirSync(dir)).toEqual([MANIFEST_FILE]);
    expect(await readBatchManifest(dir)).toMatchObject({
      type: 'batch',
      startedAt: 5,
      concurrency: 2,
      tasks: [{ id: 'a/b', file: 'a_b-1234.jsonl' }],
    });
  });

  it('refuses a manifest that is not one, or names files outside its folder', async () => {
    fs.writeFileSync(path.join(dir, MANIFEST_FILE), '{"type":"batch"');
    await expect(readBatchManifest(dir)).rejects.toThrow(HistoryFileError);
    fs.writeFileSync(
      path.join(dir, MANIFEST_FILE),
      JSON.stringify({ type: 'batch', tasks: [{ id: 'x', file: '../../etc/passwd' }] }),
    );
    await expect(readBatchManifest(dir)).rejects.toThrow(
      'is not a batch manifest: expected { type: "batch", tasks: [{ id, file }] } with plain file names',
    );
  });
});
