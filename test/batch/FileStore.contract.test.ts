// The RunStore contract (test/helpers/storeContract.ts) on FileStore: a folder of batches, each
// a folder as a historyDir batch's. Each test gets a new temporary folder.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { FileStore } from '../../lib/subpaths/batch';
import { storeContract } from '../helpers/storeContract';

storeContract('FileStore', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-filestore-'));
  return Promise.resolve({
    store: new FileStore(root),
    other: new FileStore(root),
    drop: () => Promise.resolve(fs.rmSync(root, { recursive: true, force: true })),
    cut: (batchId, runId, keep) => {
      const file = path.join(root, batchId, `${runId}.jsonl`);
      if (keep === 0) fs.rmSync(file);
      else
        fs.writeFileSync(
          file,
          fs
            .readFileSync(file, 'utf8')
            .split(/(?<=\n)/)
            .slice(0, keep)
            .join(''),
        );
      return Promise.resolve();
    },
  });
});
