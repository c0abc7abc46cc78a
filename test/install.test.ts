import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { installInEmptyProject, packLibrary, peerProblems, run } from './helpers/packedInstall';
import { startOpenAIChatServer, type OpenAIChatServer } from '../examples/servers/openaiChatServer';

// The packed library installed from its tarball with plain `npm install` beside the 6.x majors
// from the registry (which needs the registry), then used. test/install.v7.test.ts does the same
// beside the 7.x majors, on Node 22 and later.
describe('npm install of the packed library beside ai 6, openai 6 and @anthropic-ai/sdk', () => {
  let work: string;
  let project: string;
  let server: OpenAIChatServer;
  let install: Awaited<ReturnType<typeof installInEmptyProject>>;

  beforeAll(async () => {
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'asm-install-6-'));
    project = path.join(work, 'project');
    const tarball = await packLibrary(work);
    install = await installInEmptyProject(project, [tarball, 'ai@6', 'openai@6', '@anthropic-ai/sdk']);
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
    '%s runs a turn of fromAISDK and of fromOpenAIChat on the installed SDKs',
    async (script) => {
      const result = await run(process.execPath, [script], project, { OPENAI_BASE_URL: server.baseURL });
      expect(result.stderr).toBe('');
      expect(JSON.parse(result.stdout)).toMatchObject({
        ai: { major: 6, spec: 'v3', outcome: 'end_of_turn', text: 'hi' },
        openai: { major: 6, outcome: 'end_of_turn', text: 'done', toolCalls: 1 },
      });
      expect(server.rejected).toEqual([]);
    },
    60_000,
  );
});
