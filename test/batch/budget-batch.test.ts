import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runBatchExample } from '../../examples/budget-batch';
import { loadHistory } from '../../lib/subpaths/history';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-example-'));
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('examples/budget-batch', () => {
  it('runs out of the shared budget part-way, and says where to look', async () => {
    const lines: string[] = [];
    const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
    const report = await runBatchExample({ sleep: tick, print: (l) => lines.push(l), tty: false, historyDir: dir });
    const { outcomes } = report.totals;
    expect(report.runs).toHaveLength(50);
    expect(outcomes.end_of_turn).toBeGreaterThan(0);
    expect(outcomes.budget_exceeded).toBeGreaterThan(0);
    expect(outcomes.skipped).toBeGreaterThan(0);
    expect(outcomes.error).toBe(2);
    expect(report.totals.costUsd).toBeLessThanOrEqual(1.5 + 8 * 0.045);
    const out = lines.join('\n');
    expect(out).toMatch(/^\[ ?\d+\/50\] fix-\d\d-[a-z-]+ +end_of_turn /m);
    expect(out).toMatch(
      /skipped \d+ runs not yet started: the batch's total budget exceeded: \$1\.\d{4} of \$1\.5000 after \d+ LLM calls/,
    );
    expect(out).toContain('Runs by outcome');
    expect(out).toContain('tasks[6].agent() failed: sandbox failed to boot: no space left on device');
    expect(out).toContain('sendUserMessage failed after 3 attempts: 529 overloaded_error');
    const file = /npx agent-sm inspect (\S+)/.exec(out)![1]!;
    expect(out).toContain(`npm run agent-sm -- inspect ${file}`);
    const run = report.runs.find((r) => r.historyFile === file)!;
    expect(run.outcome).not.toBe('end_of_turn');
    expect((await loadHistory(file)).records).toHaveLength(run.transitions);
    // It ends with the batch's page: every run, those without a history file included.
    expect(lines.at(-1)).toBe(`Batch report (open it in a browser): ${path.join(dir, 'report.html')}`);
    expect(out).toContain(`npx agent-sm report ${dir}`);
    const html = fs.readFileSync(path.join(dir, 'report.html'), 'utf8');
    expect(html).toContain('<h1>Batch of 50 runs</h1>');
    expect(html).toContain('$1.5000 (');
  });
});
