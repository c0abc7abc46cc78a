// `agent-sm show` on a large journaled file, as the built executable: its peak memory (the
// child's max RSS, reported by the child itself at exit) stays under a bound that does not
// grow with the file, since each line is printed as it is read and let go.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { buildCli, CLI } from '../helpers/builtCli';

const FILE_BYTES = 160 * 1024 * 1024;
/** Peak RSS allowed, whatever the file's size: Node itself, one read chunk, one line at a time. */
const MAX_RSS_BYTES = 150 * 1024 * 1024;

let dir: string;
beforeAll(() => {
  buildCli();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-show-memory-'));
}, 120_000);
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A journaled run of many turns, each a user message, a long model answer and four moves, to about `bytes`. */
function writeLargeRun(file: string, bytes: number): void {
  const fd = fs.openSync(file, 'w');
  try {
    const T = Date.UTC(2026, 0, 1);
    const answer = 'All tests pass now. '.repeat(400); // 8 KB
    let written = 0;
    let seq = 0;
    const move = (from: string, to: string, description: string, data?: unknown): string => {
      seq += 1;
      return `${JSON.stringify({ seq, from, to, description, at: T + seq, durationMs: 1, forced: false, ...(data === undefined ? {} : { data }) })}\n`;
    };
    let chunk = move('Ready', 'WaitingForUserInput', 'ready');
    for (let turn = 1; written < bytes; turn++) {
      chunk += move('WaitingForUserInput', 'SendingToLLM', 'sending the user message');
      chunk += `${JSON.stringify({ type: 'llm', seq, turn, operation: 'sendUserMessage', attempt: 1, startedAt: T + seq, endedAt: T + seq, input: { kind: 'user_message', message: `question ${turn}` }, response: { text: answer }, costUsd: 0.01 })}\n`;
      chunk += move('SendingToLLM', 'ProcessingLLMResponse', 'LLM responded', { attempts: 1 });
      chunk += move('ProcessingLLMResponse', 'EndOfTurn', 'text-only response ends the turn', {
        outcome: 'end_of_turn',
      });
      chunk += move('EndOfTurn', 'WaitingForUserInput', 'next turn');
      if (chunk.length > 1024 * 1024) {
        written += fs.writeSync(fd, chunk);
        chunk = '';
      }
    }
    fs.writeSync(fd, chunk);
  } finally {
    fs.closeSync(fd);
  }
}

/** Runs the built CLI with stdout a pipe (read and dropped); resolves to its exit code, output size and max RSS in bytes. */
function runMeasured(
  args: string[],
): Promise<{ code: number | null; outBytes: number; stderr: string; maxRssBytes: number }> {
  const preload = path.join(dir, 'reportMaxRss.cjs');
  const rssFile = path.join(dir, `rss-${Date.now()}`);
  fs.writeFileSync(
    preload,
    "process.on('exit', () => require('node:fs').writeFileSync(process.env.AGENT_SM_RSS_FILE, String(process.resourceUsage().maxRSS)));\n",
  );
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--require', preload, CLI, ...args], {
      env: { ...process.env, AGENT_SM_RSS_FILE: rssFile },
    });
    let outBytes = 0;
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (outBytes += d.length));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) =>
      resolve({ code, outBytes, stderr, maxRssBytes: Number(fs.readFileSync(rssFile, 'utf8')) * 1024 }),
    );
  });
}

describe('agent-sm show on a large file (built executable, stdout a pipe)', () => {
  it(`prints the whole conversation of a ${FILE_BYTES / 1024 / 1024} MB file with a peak RSS under ${MAX_RSS_BYTES / 1024 / 1024} MB`, async () => {
    const file = path.join(dir, 'large.jsonl');
    writeLargeRun(file, FILE_BYTES);
    const result = await runMeasured(['show', '--full', file]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    // The whole answer of every turn came out: most of the file.
    expect(result.outBytes).toBeGreaterThan(FILE_BYTES * 0.8);
    expect(result.maxRssBytes).toBeLessThan(MAX_RSS_BYTES);
  }, 120_000);
});
