import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { JsonlHistorySink } from '../../lib/history/JsonlHistorySink';
import { failedRun, T0 } from '../fixtures/agentRun';

/**
 * For a test file: before each test, a fresh temporary folder holding `run.jsonl`, the
 * history of the failed run (`failedRun`, run id task-42, started at T0); removed after it.
 */
export function failedRunFolder(prefix: string): { readonly dir: string; readonly runFile: string } {
  let dir = '';
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
    const sink = JsonlHistorySink.open(path.join(dir, 'run.jsonl'), { runId: 'task-42', startedAt: T0 });
    failedRun(sink);
    sink.close();
  });
  afterEach(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return {
    get dir() {
      return dir;
    },
    get runFile() {
      return path.join(dir, 'run.jsonl');
    },
  };
}
