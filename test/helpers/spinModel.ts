import { spawnSync } from 'node:child_process';
import path from 'node:path';

/** The runner of the money protocol's spin model (lib/integrations/bullmq/model/run.sh). */
const RUNNER = path.resolve(__dirname, '..', '..', 'lib', 'integrations', 'bullmq', 'model', 'run.sh');

/** What `run.sh NAME` said: its exit code (0 holds, 1 violated, 2 could not check) and its output. */
export interface ModelCheck {
  code: number;
  output: string;
}

/**
 * Runs spin on one scenario of the model (a name of run.sh's table, or `correct:NAME`). Throws,
 * never skips, when spin or gcc is missing: the check is part of the suite.
 */
export function checkModel(name: string): ModelCheck {
  for (const tool of ['spin', 'gcc'])
    if (spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0)
      throw new Error(`the model check needs ${tool}: apt-get install spin gcc (docs/install.md)`);
  const run = spawnSync('bash', [RUNNER, name], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  return { code: run.status ?? -1, output: `${run.stdout}${run.stderr}` };
}
