// `agent-sm watch` and `agent-sm inspect` (the built executable) read one figure of a batch's
// money, the three figures apart: a run in flight when its batch paused holds a reservation
// with no answer yet, which may be billed, so both count it at its worst case as uncertain.
// (The bug: watch summed what the runs' records carried, $0.0112 here, and inspect $0.0212.)
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createScriptedAgent, runBatch, type Pricing, type ScriptedReply } from '../../lib/index';
import { lockFolder, type FolderLock } from '../../lib/batch/keeping/lockFolder';
import { buildCli, runBuiltCli, startCli, type RunningCli } from '../helpers/builtCli';

// $5 per million tokens: a call bounded at 1,000 + 1,000 tokens holds $0.01.
const pricing: Pricing = (u) => ((u.inputTokens ?? 0) + (u.outputTokens ?? 0)) * 5e-6;
const bound = { inputTokens: 1000, maxOutputTokens: 1000, model: 'gpt-local' };
const answer: ScriptedReply = { text: 'ok', usage: { inputTokens: 100, outputTokens: 20 } };

let dir: string;
let running: RunningCli | undefined;
let lock: FolderLock | undefined;
beforeAll(() => buildCli(), 120_000);
beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-watch-spend-'));
  const task = (id: string, replies: ScriptedReply[]) => ({
    id,
    input: 'go',
    agent: () => createScriptedAgent({ replies, bound, sleep: async () => undefined }),
  });
  await runBatch([task('ok', [answer]), task('flaky', [{ error: 'HTTP 500' }, answer]), task('paused', [answer])], {
    logger: false,
    pricing,
    total: { maxCostUsd: 1, strict: true },
    historyDir: dir,
    ledger: true,
    retry: { retries: 2, shouldRetry: () => true },
    sleep: async () => undefined,
  });
  // "paused" as its batch left it when the cap paused it: its call reserved, no answer yet.
  const file = path.join(dir, 'paused.jsonl');
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  const reserve = lines.findIndex((l) => l.startsWith('{"type":"reserve"'));
  fs.writeFileSync(file, `${lines.slice(0, reserve + 1).join('\n')}\n`);
});
afterEach(() => {
  running?.child.kill('SIGKILL');
  running = undefined;
  lock?.release();
  lock = undefined;
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('agent-sm watch and inspect on a paused batch (built executable)', () => {
  it('say the same money: billed, and uncertain with why', async () => {
    lock = lockFolder(dir, 'test batch');
    running = startCli(['watch', dir]);
    await running.seen('progress: 2/3 finished,');
    lock.release();
    lock = undefined;
    expect(await running.exited()).toBe(0);
    const money =
      '$0.0012 billed, $0.0200 uncertain (2 LLM calls: it failed after the request may have left (HTTP 500); 1 other reason)';
    const last = running.stdout().trimEnd().split('\n').at(-1);
    expect(last).toMatch(/^\d\d:\d\d:\d\d {2}progress: 2\/3 finished, 1 cut off, /);
    expect(last).toContain(`, $0.0212 spent (${money})`);

    const inspect = runBuiltCli(['inspect', dir]);
    expect(inspect.code).toBe(0);
    expect(inspect.stdout.split('\n')[0]).toContain(`, ${money}`);
    expect(inspect.stdout).toContain(`Total cost ${money}`);
    // Per run: what it charged, its uncertain part beside it.
    expect(inspect.stdout).toMatch(/ {2}flaky +end_of_turn +\$0\.0106 \(\$0\.0100 uncertain\)/);
    expect(inspect.stdout).toMatch(/ {2}paused +cut_off +\$0\.0100 \(\$0\.0100 uncertain\)/);
  });
});
