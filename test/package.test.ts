import { execFileSync } from 'node:child_process';
import path from 'node:path';
import * as api from '../lib/index';

const root = path.resolve(__dirname, '..');
const run = (file: string, args: string[]) => execFileSync(file, args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

// Builds once, then uses the package by its name (Node's self-reference through `exports`),
// exactly as `import` and `require` users would.
describe('the built package', () => {
  beforeAll(() => {
    run(process.execPath, [path.join(root, 'node_modules/tsup/dist/cli-default.js'), '--silent']);
  }, 120_000);

  const names = Object.keys(api).sort();

  it('exports every public name to require()', () => {
    const out = run(process.execPath, ['-e', "console.log(JSON.stringify(Object.keys(require('agent-state-machine')).sort()))"]);
    expect(JSON.parse(out)).toEqual(names);
  });

  it('exports every public name to import, and works', () => {
    const script = [
      "import * as m from 'agent-state-machine';",
      'const sm = new m.StateMachine({ logger: false });',
      "sm.transition(m.State.WaitingForUserInput, 'esm');",
      'console.log(JSON.stringify({ names: Object.keys(m).sort(), current: sm.current }));',
    ].join('\n');
    const out = JSON.parse(run(process.execPath, ['--input-type=module', '-e', script]));
    expect(out).toEqual({ names, current: 'WaitingForUserInput' });
  });

  // 5.4 is the oldest TypeScript the published types support (they use `NoInfer`); the
  // README's Install section says so.
  it.each(['typescript', 'typescript-5.4'])('gives both module kinds types that resolve under %s', (compiler) => {
    expect(() => run(process.execPath, [path.join(root, 'node_modules', compiler, 'bin/tsc'), '-p', 'test/fixtures/package/tsconfig.json'])).not.toThrow();
  }, 60_000);

  it('serves agent-state-machine/bullmq to import and require, loading the main entry once', () => {
    const names = ['RedisBudget', 'WorkerLostError', 'startBatchWorker', 'submitBatch'];
    const required = run(process.execPath, ['-e', "const b = require('agent-state-machine/bullmq'); const m = require('agent-state-machine'); console.log(JSON.stringify({ names: Object.keys(b).sort(), same: new b.WorkerLostError('w', 1) instanceof Error && typeof m.runBatch === 'function' }))"]);
    expect(JSON.parse(required)).toEqual({ names, same: true });
    const imported = run(process.execPath, ['--input-type=module', '-e', "import * as b from 'agent-state-machine/bullmq'; console.log(JSON.stringify(Object.keys(b).sort()))"]);
    expect(JSON.parse(imported)).toEqual(names);
  });

  it('ships no files it does not use', () => {
    const packed = JSON.parse(run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'])) as { files: { path: string }[] }[];
    const files = packed[0]!.files.map((f) => f.path).sort();
    expect(files).toContain('LICENSE');
    expect(files).toContain('dist/cli.cjs');
    expect(files.filter((f) => /^dist\/cli\.(mjs|d\.ts|d\.mts)$/.test(f))).toEqual([]);
  });
});
