// `agent-sm inspect <file>` and `agent-sm show <file>` (the built executable) say a run's money
// with the three figures apart: billed, uncertain with why, released (not billed).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createScriptedAgent, runBatch } from '../../lib/index';
import { buildCli, runBuiltCli } from '../helpers/builtCli';
import { threeFiguresTask, THREE_FIGURES } from '../helpers/threeFigures';

let dir: string;
beforeAll(async () => {
  buildCli();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-run-spend-'));
  await runBatch([threeFiguresTask('a')], {
    logger: false,
    historyDir: dir,
    sleep: async () => undefined,
    ...THREE_FIGURES,
  });
}, 120_000);
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const WHY = 'it failed after the request may have left (HTTP 500)';

describe('one run file, its money apart', () => {
  it('inspect <file> ends with the money line; --json carries the figures', () => {
    const file = path.join(dir, 'a.jsonl');
    const text = runBuiltCli(['inspect', file]);
    expect({ code: text.code, stderr: text.stderr }).toEqual({ code: 0, stderr: '' });
    expect(text.stdout).toContain(
      `\nMoney: $0.0006 billed, $0.0100 uncertain (1 LLM call: ${WHY}), $0.0100 released (not billed)\n`,
    );
    const json = JSON.parse(runBuiltCli(['inspect', '--json', file]).stdout) as { spend: unknown };
    expect(json.spend).toEqual({
      costUsd: expect.closeTo(0.0106, 10),
      uncertainUsd: expect.closeTo(0.01, 10),
      releasedUsd: expect.closeTo(0.01, 10),
      uncertain: [{ why: WHY, calls: 1 }],
      unpricedCalls: 0,
      unpriced: [],
    });
  });

  it('show <folder> <run> says what each attempt was charged: released, uncertain with why, billed', () => {
    const shown = runBuiltCli(['show', dir, 'a']);
    expect({ code: shown.code, stderr: shown.stderr }).toEqual({ code: 0, stderr: '' });
    const attempts = shown.stdout.split('\n').filter((l) => l.startsWith('  model, attempt'));
    expect(attempts).toEqual([
      expect.stringMatching(
        /^ {2}model, attempt 1, \$0\.0100 released \(answered 429, not billed: .*\) \(before move 3\): FAILED Error: 429 rate limited$/,
      ),
      `  model, attempt 2, $0.0100 uncertain (${WHY}) (before move 3): FAILED Error: HTTP 500`,
      expect.stringMatching(/^ {2}model, attempt 3, \$0\.0006 \(before move 3\)/),
    ]);
  });

  it('report <file> puts the same money line on the run page', () => {
    const page = path.join(dir, 'a.html');
    const made = runBuiltCli(['report', path.join(dir, 'a.jsonl'), '-o', page]);
    expect({ code: made.code, stderr: made.stderr }).toEqual({ code: 0, stderr: '' });
    const usage = /<section id="usage">.*?<p class="sub">(.*?)<\/p>/s.exec(fs.readFileSync(page, 'utf8'))![1]!;
    // As the page escapes it: the reason's parentheses are plain text.
    expect(usage).toContain(`$0.0006 billed, $0.0100 uncertain (1 LLM call: ${WHY}), $0.0100 released (not billed)`);
  });

  it('a call whose cost nobody knows is said apart in inspect, --json, show and report: never $0', async () => {
    const unpriced = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-unpriced-'));
    try {
      const agent = () =>
        createScriptedAgent({
          sleep: async () => undefined,
          replies: [{ text: 'ok', usage: { inputTokens: 100, outputTokens: 50 }, model: 'm1' }],
        });
      await runBatch([{ id: 'u', input: 'go', agent }], { logger: false, historyDir: unpriced });
      const file = path.join(unpriced, 'u.jsonl');
      const why = 'no `pricing` was given, so the cost of m1 is unknown';
      const text = runBuiltCli(['inspect', file]);
      expect({ code: text.code, stderr: text.stderr }).toEqual({ code: 0, stderr: '' });
      expect(text.stdout).toContain(`\nMoney: $0.0000 billed, and 1 LLM call of unknown cost (${why})\n`);
      const json = JSON.parse(runBuiltCli(['inspect', '--json', file]).stdout) as { spend: unknown };
      expect(json.spend).toMatchObject({ costUsd: 0, unpricedCalls: 1, unpriced: [{ why, calls: 1 }] });
      expect(runBuiltCli(['show', file]).stdout).toContain(`  model, attempt 1, cost unknown (${why}) (before move 3)`);
      expect(runBuiltCli(['inspect', unpriced]).stdout).toContain(
        `Total cost $0.0000 billed, and 1 LLM call of unknown cost (${why})`,
      );
      const page = path.join(unpriced, 'u.html');
      expect(runBuiltCli(['report', file, '-o', page]).code).toBe(0);
      expect(fs.readFileSync(page, 'utf8')).toContain('$0.0000 billed, and 1 LLM call of unknown cost');
    } finally {
      fs.rmSync(unpriced, { recursive: true, force: true });
    }
  });
});
