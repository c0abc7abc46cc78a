#!/usr/bin/env node
// The `agent-sm` executable: runs `main` on the process's arguments and sets the exit code.
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

void main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
