import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createScriptedAgent } from '../../lib/agent/createScriptedAgent';
import { runBatch, type BatchTask } from '../../lib/batch/runBatch';
import { formatBatchReport } from '../../lib/batch/formatBatchReport';

const instant = async (): Promise<void> => undefined;

let dir: string;
beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-salvage-'))));
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

function tasks(built: string[]): BatchTask[] {
  return Array.from({ length: 3 }, (_, i) => ({
    id: `t${i}`,
    input: 'go',
    agent: () => (built.push(`t${i}`), createScriptedAgent({ sleep: instant, replies: [{ text: 'done' }] })),
  }));
}

/** A hole of NUL bytes over line `n` of `file`, as a power cut leaves one. */
function punchHole(file: string, n: number): void {
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  lines[n - 1] = '\0'.repeat(lines[n - 1]!.length);
  fs.writeFileSync(file, lines.join('\n'));
}

function recordingLogger() {
  const lines: string[] = [];
  const log = (level: string) => (message: string) => void lines.push(`${level} ${message}`);
  return { lines, logger: { error: log('error'), warn: log('warn'), info: log('info'), debug: log('debug') } };
}

describe('runBatch({ resume: true, salvage: true })', () => {
  it('is refused by name without resume, and must be a boolean', async () => {
    await expect(runBatch(tasks([]), { historyDir: dir, salvage: true, logger: false })).rejects.toThrow(
      'Expected `salvage` to be left out (or false) unless `resume` is true',
    );
    await expect(
      runBatch(tasks([]), { historyDir: dir, resume: true, salvage: 'yes' as never, logger: false }),
    ).rejects.toThrow('Expected `salvage` to be true or false');
  });

  it('reads past a NUL hole in an ended run, names the file and its skipped line, and runs only what did not end', async () => {
    await runBatch(tasks([]), { historyDir: dir, logger: false });
    const file = path.join(dir, 't1.jsonl');
    punchHole(file, 3);
    fs.rmSync(path.join(dir, 't2.jsonl'));
    // Without salvage the batch is refused, and told of salvage.
    await expect(runBatch(tasks([]), { historyDir: dir, resume: true, logger: false })).rejects.toThrow(
      /corrupt line.*Resume with `salvage: true` to read past its damaged lines/,
    );
    const built: string[] = [];
    const { lines, logger } = recordingLogger();
    const report = await runBatch(tasks(built), { historyDir: dir, resume: true, salvage: true, logger });
    expect(built).toEqual(['t2']);
    expect(report.runs.map((r) => [r.id, r.outcome, r.resumed ?? 'new'])).toEqual([
      ['t0', 'end_of_turn', 'finished'],
      ['t1', 'end_of_turn', 'finished'],
      ['t2', 'end_of_turn', 'new'],
    ]);
    expect(report.runs[1]!.salvaged).toEqual({
      file,
      skippedLines: [3],
      warnings: [expect.stringContaining(`${file}:3: skipped a corrupt line`)],
    });
    expect(report.runs[0]!.salvaged).toBeUndefined();
    expect(lines.filter((l) => l.includes('salvaged'))).toEqual([
      expect.stringMatching(
        new RegExp(`^warn resume salvaged ${file}: skipped 1 corrupt line \\(3\\), what they held is lost`),
      ),
    ]);
    expect(formatBatchReport(report)).toContain(`  t1  salvaged ${file}: skipped 1 corrupt line (3)`);
  });
});
