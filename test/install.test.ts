import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { installSuite } from './helpers/installSuite';
import { installInEmptyProject, packLibrary, run } from './helpers/packedInstall';

// The packed library installed from its tarball with plain `npm install` beside the 6.x majors
// from the registry (which needs the registry), then used. test/install.v7.test.ts does the same
// beside the 7.x majors, on Node 22 and later.
describe('npm install of the packed library beside ai 6, openai 6 and @anthropic-ai/sdk', () => {
  installSuite(['ai@6', 'openai@6', '@anthropic-ai/sdk'], { ai: { major: 6, spec: 'v3' }, openai: { major: 6 } });
});

// The packed library installed alone, as a user does before reading that a subpath has a peer:
// importing such a subpath says, in one line, which package to install, not Node's "Cannot find package".
describe('npm install of the packed library alone', () => {
  const ranges = (
    JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8')) as {
      peerDependencies: Record<string, string>;
    }
  ).peerDependencies;
  // Each subpath and the optional peers its code loads.
  const NEEDS: Record<string, string[]> = {
    pricing: ['@pydantic/genai-prices'],
    'ai-sdk': ['ai'],
    otel: ['@opentelemetry/api'],
    bullmq: ['bullmq', 'ioredis'],
    postgres: ['pg'],
    mcp: ['@modelcontextprotocol/sdk'],
    langgraph: ['@langchain/core', '@langchain/langgraph'],
    'openai-agents': ['@openai/agents'],
  };
  const expected = (subpath: string) => {
    const peers = NEEDS[subpath]!;
    const named = peers.map((p) => `${p} (${ranges[p]})`).join(' and ');
    return {
      name: 'MissingPeerError',
      code: 'missing_peer',
      message:
        `agent-state-machine/${subpath} needs the optional peer dependency ${named}, ` +
        `${peers.length === 1 ? 'which is' : 'which are'} not installed: npm install ${peers.join(' ')}`,
    };
  };
  // Loads each subpath, by `import` or `require`, and prints what each threw.
  const script = (load: (s: string) => string) =>
    [
      `const subpaths = ${JSON.stringify([...Object.keys(NEEDS), 'openai', 'anthropic'])};`,
      'const out = {};',
      'Promise.all(subpaths.map(async (s) => {',
      `  try { await ${load('s')}; out[s] = 'loaded'; }`,
      '  catch (e) { out[s] = { name: e.name, code: e.code, message: e.message }; }',
      '})).then(() => console.log(JSON.stringify(out)));',
    ].join('\n');

  let work: string;
  let project: string;
  beforeAll(async () => {
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'asm-install-alone-'));
    project = path.join(work, 'project');
    const install = await installInEmptyProject(project, [await packLibrary(work)]);
    if (install.code !== 0) throw new Error(`npm install failed (exit ${install.code}):\n${install.stderr}`);
  }, 600_000);
  afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

  it.each([
    ['import', ['--input-type=module', '-e', script((s) => `import(\`agent-state-machine/\${${s}}\`)`)]],
    ['require', ['-e', script((s) => `Promise.resolve().then(() => require(\`agent-state-machine/\${${s}}\`))`)]],
  ])(
    '%s of a subpath without its peer throws one line: the package, its range, npm install',
    async (_, args) => {
      const result = await run(process.execPath, args, project);
      expect(result.stderr).toBe('');
      expect(JSON.parse(result.stdout)).toEqual({
        ...Object.fromEntries(Object.keys(NEEDS).map((s) => [s, expected(s)])),
        // These take the client the user passes: they load no peer of their own.
        openai: 'loaded',
        anthropic: 'loaded',
      });
    },
    60_000,
  );

  it('a static import of a subpath without its peer ends the process with that line', async () => {
    const result = await run(
      process.execPath,
      ['--input-type=module', '-e', "import { createPricing } from 'agent-state-machine/pricing';"],
      project,
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`MissingPeerError: ${expected('pricing').message}\n`);
  }, 60_000);
});
