// Instructions a Node script executes, counted by valgrind's callgrind: deterministic where wall
// time on a shared machine is not. The transition suite's move and the meter's answers use it.
import { spawn, spawnSync } from 'node:child_process';

/** Why callgrind cannot count here, or undefined when it can. */
export function valgrindMissing(): string | undefined {
  return spawnSync('valgrind', ['--version']).status === 0
    ? undefined
    : 'valgrind is not installed (apt-get install valgrind)';
}

/**
 * The instructions `node --single-threaded script ...args` executes, from its start to its exit;
 * with `fromSignal`, only from when the script calls `countFromHere()` (its warm-up runs
 * uninstrumented, several times faster, so it can be as long as a CPU-time warm-up).
 */
export function countInstructions(
  script: string,
  args: readonly string[],
  { fromSignal = false }: { fromSignal?: boolean } = {},
): Promise<number> {
  const child = spawn(
    'valgrind',
    [
      '--tool=callgrind',
      '--callgrind-out-file=/dev/null',
      ...(fromSignal ? ['--instr-atstart=no'] : []),
      process.execPath,
      '--single-threaded',
      script,
      ...args,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, COUNT_FROM_SIGNAL: fromSignal ? '1' : '' } },
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

/**
 * In a script run by `countInstructions(…, { fromSignal: true })`: switches callgrind's
 * instrumentation on (callgrind_control, which reaches the process through vgdb) and resolves
 * once it is on. Elsewhere it does nothing.
 */
export function countFromHere(): Promise<void> {
  if (process.env.COUNT_FROM_SIGNAL !== '1') return Promise.resolve();
  return new Promise((resolve, reject) => {
    const control = spawn('callgrind_control', ['-i', 'on', String(process.pid)], { stdio: 'ignore' });
    control.on('error', reject);
    control.on('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`callgrind_control -i on ${process.pid} exited ${code}`)),
    );
  });
}
