// The journal a cut-off run resumes from: its file's, or, when that attempt was cut again before
// it had journaled again what it served, the fuller journal of an attempt kept beside it.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { JsonlHistorySink } from '../../lib/history/JsonlHistorySink';
import { readResumeJournal } from '../../lib/batch/keeping/readResumeJournal';

let dir: string;
beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-resumejournal-'))));
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A run file whose journal holds `texts.length` responses. */
function file(name: string, texts: string[]): string {
  const at = path.join(dir, name);
  const sink = JsonlHistorySink.open(at, { overwrite: true });
  for (const [i, text] of texts.entries())
    sink.journal({
      type: 'llm',
      turn: 1,
      operation: i === 0 ? 'sendUserMessage' : 'sendToolResults',
      attempt: 1,
      startedAt: 0,
      endedAt: 0,
      response: { text },
    } as never);
  sink.close();
  return at;
}

const texts = (lines: readonly { response?: unknown }[]) => lines.map((l) => (l.response as { text: string }).text);

describe('readResumeJournal', () => {
  it("reads the run's file when no attempt is kept beside it", async () => {
    const run = file('run.jsonl', ['a', 'b']);
    expect(texts(await readResumeJournal(run, false))).toEqual(['a', 'b']);
  });

  it('takes the kept attempt whose journal holds more responses: the newest was cut again while serving', async () => {
    file('run.jsonl.interrupted', ['a', 'b']);
    const run = file('run.jsonl', ['a']);
    expect(texts(await readResumeJournal(run, false))).toEqual(['a', 'b']);
  });

  it('takes the newest of those with the most responses', async () => {
    file('run.jsonl.interrupted', ['a', 'b']);
    file('run.jsonl.interrupted.2', ['a', 'c']);
    const run = file('run.jsonl', []);
    expect(texts(await readResumeJournal(run, false))).toEqual(['a', 'c']);
    // The newest file wins a tie.
    file('run.jsonl.interrupted.3', ['a', 'd']);
    const again = file('run.jsonl', ['a', 'e']);
    expect(texts(await readResumeJournal(again, false))).toEqual(['a', 'e']);
  });
});
