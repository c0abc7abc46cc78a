#!/usr/bin/env node
// The `agent-sm` executable: runs `main` on the process's arguments and sets the exit code.
import { main } from './main';

// `agent-sm inspect run.jsonl | head` closes stdout early: that is not an error.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});

void main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
