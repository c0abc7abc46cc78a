// For the tests of how much memory the readers use: a large journaled run file, and the built
// CLI run with stdout a pipe while the child itself reports its peak RSS at exit.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CLI } from './builtCli';

/** A journaled run of many turns, each a user message, a long model answer and four moves, to about `bytes`. */
export function writeLargeRun(file: string, bytes: number): void {
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

/**
 * Runs the built CLI with stdout a pipe (read and dropped past its first 64 KB, kept as `stdout`),
 * files of its own in `dir`; resolves to its exit code, output size and max RSS in bytes.
 */
export function runMeasured(
  dir: string,
  args: string[],
  nodeFlags: readonly string[] = [],
): Promise<{ code: number | null; outBytes: number; stdout: string; stderr: string; maxRssBytes: number }> {
  const preload = path.join(dir, 'reportMaxRss.cjs');
  const rssFile = path.join(dir, `rss-${Date.now()}`);
  // The child's own peak, in KiB: Linux's VmHWM, the high-water mark of the memory exec gave
  // it. Not `resourceUsage().maxRSS`: Linux carries that across exec from the forked copy of
  // the spawning process, so in a long test run it read the Jest worker's size (279 MB), not
  // the CLI's (105 MB). Elsewhere, maxRSS.
  fs.writeFileSync(
    preload,
    [
      "const fs = require('node:fs');",
      'function peakKiB() {',
      "  try { const m = /VmHWM:\\s*(\\d+) kB/.exec(fs.readFileSync('/proc/self/status', 'utf8')); if (m) return Number(m[1]); } catch {}",
      '  return process.resourceUsage().maxRSS;',
      '}',
      "process.on('exit', () => fs.writeFileSync(process.env.AGENT_SM_RSS_FILE, String(peakKiB())));",
      '',
    ].join('\n'),
  );
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeFlags, '--require', preload, CLI, ...args], {
      env: { ...process.env, AGENT_SM_RSS_FILE: rssFile },
    });
    let outBytes = 0;
    let stderr = '';
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => {
      if (outBytes < 64 * 1024) stdout += d.subarray(0, 64 * 1024 - outBytes).toString();
      outBytes += d.length;
    });
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) =>
      resolve({ code, outBytes, stdout, stderr, maxRssBytes: Number(fs.readFileSync(rssFile, 'utf8')) * 1024 }),
    );
  });
}
