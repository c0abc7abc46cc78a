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

  it('exports the ai-sdk subpath to require() and import, and its loop runs a turn on the SDK mock model', () => {
    const required = run(process.execPath, ['-e', "console.log(JSON.stringify(Object.keys(require('agent-state-machine/ai-sdk')).sort()))"]);
    expect(JSON.parse(required)).toEqual(['budgetFor', 'fromAISDK', 'usageFromAISDK']);
    const script = [
      "import { AgentWithStateMachine } from 'agent-state-machine';",
      "import { fromAISDK } from 'agent-state-machine/ai-sdk';",
      "import { MockLanguageModelV3 } from 'ai/test';",
      "const usage = { inputTokens: { total: 3, noCache: 3 }, outputTokens: { total: 2, text: 2 } };",
      "const model = new MockLanguageModelV3({ doGenerate: { content: [{ type: 'text', text: 'hi' }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] } });",
      'const result = await new AgentWithStateMachine(fromAISDK({ model }), { logger: false }).runTurn("hello");',
      'console.log(JSON.stringify({ outcome: result.outcome, text: result.text }));',
    ].join('\n');
    expect(JSON.parse(run(process.execPath, ['--input-type=module', '-e', script]))).toEqual({ outcome: 'end_of_turn', text: 'hi' });
  });

  it('never loads the ai package from the main entry', () => {
    const out = run(process.execPath, ['-e', "require('agent-state-machine'); console.log(Object.keys(require.cache).some((f) => /node_modules[\\\\/]ai[\\\\/]/.test(f)))"]);
    expect(out.trim()).toBe('false');
  });

  // 5.4 is the oldest TypeScript the published types support (they use `NoInfer`); the
  // README's Install section says so.
  it.each(['typescript', 'typescript-5.4'])('gives both module kinds types that resolve under %s', (compiler) => {
    expect(() => run(process.execPath, [path.join(root, 'node_modules', compiler, 'bin/tsc'), '-p', 'test/fixtures/package/tsconfig.json'])).not.toThrow();
  }, 60_000);

  // The ai-sdk subpath needs what `ai` 6's own types need: TypeScript 5.7 or later (a generic
  // Uint8Array) and @types/json-schema under skipLibCheck: false.
  it('gives the ai-sdk subpath types that resolve for both module kinds under typescript', () => {
    expect(() => run(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', 'test/fixtures/package/tsconfig.ai-sdk.json'])).not.toThrow();
  }, 60_000);

  it('ships no files it does not use', () => {
    const packed = JSON.parse(run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'])) as { files: { path: string }[] }[];
    const files = packed[0]!.files.map((f) => f.path).sort();
    expect(files).toContain('LICENSE');
    expect(files).toContain('dist/cli.cjs');
    expect(files.filter((f) => /^dist\/cli\.(mjs|d\.ts|d\.mts)$/.test(f))).toEqual([]);
  });
});
