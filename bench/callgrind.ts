// Instructions a Node script executes, counted by valgrind's callgrind: deterministic where wall
// time on a shared machine is not. The transition suite's move and the meter's answers use it.
import { spawn, spawnSync } from 'node:child_process';

/** Why callgrind cannot count here, or undefined when it can. */
export function valgrindMissing(): string | undefined {
  return spawnSync('valgrind', ['--version']).status === 0
    ? undefined
    : 'valgrind is not installed (apt-get install valgrind)';
}

/** The instructions `node --single-threaded script ...args` executes, from its start to its exit. */
export function countInstructions(script: string, args: readonly string[]): Promise<number> {
  const child = spawn(
    'valgrind',
    ['--tool=callgrind', '--callgrind-out-file=/dev/null', process.execPath, '--single-threaded', script, ...args],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr = (stderr + text).slice(-4000)));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (status) => {
      const m = /Collected\s*:\s*(\d+)/.exec(stderr);
      if (status !== 0 || m === null) reject(new Error(`callgrind failed (${status}): ${stderr.slice(-1500)}`));
      else resolve(Number(m[1]));
    });
  });
}
