import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { installInEmptyProject, packLibrary, peerProblems, run } from './packedInstall';
import { startOpenAIChatServer, type OpenAIChatServer } from '../../examples/servers/openaiChatServer';

/** What a run script (test/fixtures/install/run.*) reports for the majors installed. */
export interface InstallExpectation {
  ai: { major: number; spec: string };
  openai: { major: number };
}

/**
 * The install test, for one set of majors: the packed library installed from its tarball with
 * plain `npm install` beside `packages` from the registry, then used from ESM and CommonJS.
 * Returns the project's folder, for the caller's own tests after these.
 */
export function installSuite(packages: string[], expected: InstallExpectation): { project: () => string } {
  let work: string;
  let project: string;
  let server: OpenAIChatServer;
  let install: Awaited<ReturnType<typeof installInEmptyProject>>;

  beforeAll(async () => {
    work = fs.mkdtempSync(path.join(os.tmpdir(), `asm-install-${expected.ai.major}-`));
    project = path.join(work, 'project');
    const tarball = await packLibrary(work);
    install = await installInEmptyProject(project, [tarball, ...packages]);
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
    `%s runs a turn of fromAISDK (ai ${expected.ai.major}, ${expected.ai.spec}) and of fromOpenAIChat (openai ${expected.openai.major})`,
    async (script) => {
      const result = await run(process.execPath, [script], project, { OPENAI_BASE_URL: server.baseURL });
      expect(result.stderr).toBe('');
      expect(JSON.parse(result.stdout)).toMatchObject({
        ai: { ...expected.ai, outcome: 'end_of_turn', text: 'hi' },
        openai: { ...expected.openai, outcome: 'end_of_turn', text: 'done', toolCalls: 1 },
      });
      expect(server.rejected).toEqual([]);
    },
    60_000,
  );
  return { project: () => project };
}
