#!/usr/bin/env node
// The `agent-sm` executable: runs `main` on the process's arguments and sets the exit code.
import { once } from 'node:events';
import { main } from './main';
import { messageOf } from '../internal/messageOf';

// `agent-sm inspect run.jsonl | head` closes stdout early: that is not an error. Any other
// failure to write (`> /dev/full`) is one line on stderr and exit code 2, never a stack trace.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  try {
    process.stderr.write(`agent-sm: error: cannot write the output: ${messageOf(error)}\n`);
  } finally {
    process.exit(2);
  }
});

// The commands that follow files run until Ctrl-C, which ends them cleanly (a summary, the
// cursor restored); a second Ctrl-C exits at once. Other commands keep the default.
const argv = process.argv.slice(2);
const controller = new AbortController();
if (argv[0] === 'watch' || argv.includes('--follow'))
  process.on('SIGINT', () => (controller.signal.aborted ? process.exit(130) : controller.abort()));

void main(argv, {
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
  signal: controller.signal,
  // A pipe's writes queue in memory when the reader is slower: commands wait for it between chunks.
  drain: () => (process.stdout.writableNeedDrain ? once(process.stdout, 'drain').then(() => undefined) : undefined),
  isTTY: process.stdout.isTTY === true,
  columns: process.stdout.columns,
  rows: process.stdout.rows,
}).then((code) => {
  process.exitCode = code;
});
