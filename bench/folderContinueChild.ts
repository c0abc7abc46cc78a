// Run by bench/folderContinue.ts under valgrind, bundled to one CommonJS file: makes `warmup`
// runs of one side of the durable suite's continue line, then `extra` more. The difference of
// two runs' instruction counts over `extra` is that side's instructions per continue.
//
//   node .bench-tmp/folder-continue/folderContinueChild.cjs <continued|floor> <warmup> <extra>
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createScriptedAgent, runBatch } from '../lib/index';
import { continueSides } from './folderContinueSides';

async function main(): Promise<void> {
  const [side, warmup, extra] = process.argv.slice(2);
  if (side !== 'continued' && side !== 'floor')
    throw new Error(`usage: folderContinueChild <continued|floor> <warmup> <extra>, got ${side}`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-continue-'));
  try {
    const run = await continueSides({ runBatch, createScriptedAgent }, dir);
    await run(side, Number(warmup));
    if (Number(extra) > 0) await run(side, Number(extra));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
