// Starts test/fixtures/batch/batchToKill.ts in a child process and kills it (SIGKILL) at a
// moment the test chooses: once exactly k runs have ended, the runs then in flight waiting in
// their tool. Never after a sleep.
import { spawn } from 'node:child_process';
import * as path from 'node:path';

/** The fixture's batch: twelve tasks, three at once. */
const TASKS = 12;
const CONCURRENCY = 3;

const FIXTURE = path.join(__dirname, '..', 'fixtures', 'batch', 'batchToKill.ts');

/** What the killed batch reported ended (`finished <id>` lines), in order. */
export async function killBatchAfter(
  dir: string,
  k: number,
  options: { durability: string; groupCommit: boolean; journal?: boolean },
): Promise<string[]> {
  return killFixtureAfter(
    [FIXTURE, dir, options.durability, options.groupCommit ? '1' : '0', options.journal === true ? '1' : '0'],
    k,
    { tasks: TASKS, concurrency: CONCURRENCY },
  );
}

/**
 * Starts a batch fixture (`node --import tsx <args>`) that prints `tool` as a run enters its tool
 * and `finished <id>` as a run ends, lets exactly k runs through their tool (a `go` line each),
 * and kills it with SIGKILL once those k ended and the runs then in flight all wait in their tool.
 * Returns the ids it reported ended, in order.
 */
export async function killFixtureAfter(
  args: readonly string[],
  k: number,
  batch: { tasks: number; concurrency: number },
): Promise<string[]> {
  const child = spawn(process.execPath, ['--import', 'tsx', ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  // Lets exactly k runs finish their tool; the others wait in it until the kill.
  child.stdin.write('go\n'.repeat(k));
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
  const finished: string[] = [];
  let inTool = 0;
  await new Promise<void>((resolve, reject) => {
    let buffered = '';
    child.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop()!;
      for (const line of lines) {
        if (line.startsWith('finished ')) finished.push(line.slice('finished '.length));
        if (line === 'tool') inTool += 1;
      }
      // k runs ended, and the runs in flight (three, or what is left of twelve) wait in their tool.
      if (finished.length >= k && inTool >= Math.min(batch.tasks, k + batch.concurrency)) resolve();
    });
    child.on('exit', (code) => reject(new Error(`the batch exited (${code}) before ${k} runs ended: ${stderr}`)));
  });
  child.kill('SIGKILL');
  const signal = await exited;
  if (signal !== 'SIGKILL') throw new Error(`the batch ended by ${String(signal)}, not by the kill`);
  return finished;
}
