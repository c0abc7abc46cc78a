import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { installInEmptyProject, packLibrary, peerProblems, run } from './helpers/packedInstall';
import { startOpenAIChatServer, type OpenAIChatServer } from '../examples/servers/openaiChatServer';

// test/install.test.ts beside the 7.x majors and @openai/agents (which depends on openai 7). They
// need Node 22 or later, so this file runs in the ai7-openai7 jest project only.
describe('npm install of the packed library beside ai 7, openai 7, @anthropic-ai/sdk and @openai/agents', () => {
  let work: string;
  let project: string;
  let server: OpenAIChatServer;
  let install: Awaited<ReturnType<typeof installInEmptyProject>>;

  beforeAll(async () => {
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'asm-install-7-'));
    project = path.join(work, 'project');
    const tarball = await packLibrary(work);
    install = await installInEmptyProject(project, [
      tarball,
      'ai@7',
      'openai@7',
      '@anthropic-ai/sdk',
      '@openai/agents',
    ]);
    // One tool call, then, once its result is in, the answer.
    server = await startOpenAIChatServer({
      respond: (body: { messages: { role: string }[] }) =>
        body.messages.at(-1)?.role === 'tool'
          ? { content: 'done' }
          : { toolCalls: [{ name: 'echo', arguments: '{"text":"hi"}' }] },
    });
  }, 600_000);

  afterAll(async () => {
    await server?.close();
    fs.rmSync(work, { recursive: true, force: true });
  });

  it('installs with no ERESOLVE and no warning about agent-state-machine, and npm ls finds no problem', async () => {
    expect(peerProblems(install)).toEqual([]);
    expect(install).toMatchObject({ code: 0 });
    const ls = await run('npm', ['ls'], project);
    expect(ls.stdout).not.toMatch(/\binvalid\b/);
    expect(ls.code).toBe(0);
  }, 60_000);

  it.each(['run.mjs', 'run.cjs'])(
    '%s runs a turn of fromAISDK on a LanguageModelV4 and of fromOpenAIChat on openai 7',
    async (script) => {
      const result = await run(process.execPath, [script], project, { OPENAI_BASE_URL: server.baseURL });
      expect(result.stderr).toBe('');
      expect(JSON.parse(result.stdout)).toMatchObject({
        ai: { major: 7, spec: 'v4', outcome: 'end_of_turn', text: 'hi' },
        openai: { major: 7, outcome: 'end_of_turn', text: 'done', toolCalls: 1 },
      });
      expect(server.rejected).toEqual([]);
    },
    60_000,
  );

  // A user's code against our .d.ts and the 7.x majors' own types, ESM and CommonJS. Under
  // skipLibCheck: false ai's types need @types/json-schema, as with ai 6 (see the README).
  it('type-checks an AI SDK 7 user of both module kinds against the published types', async () => {
    fs.mkdirSync(path.join(project, 'node_modules/@types'), { recursive: true });
    fs.cpSync(
      path.resolve(__dirname, '../node_modules/@types/json-schema'),
      path.join(project, 'node_modules/@types/json-schema'),
      { recursive: true },
    );
    const tsc = await run(
      process.execPath,
      [path.resolve(__dirname, '../node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'],
      project,
    );
    expect(tsc.stdout).toBe('');
    expect(tsc.code).toBe(0);
  }, 120_000);
});
