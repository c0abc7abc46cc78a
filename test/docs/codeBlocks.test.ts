// Docs that cannot lie: every TypeScript block of the README and the guides is type-checked, in
// one program, as users import the package (`agent-state-machine`, `agent-state-machine/openai`,
// …), and the blocks marked runnable run offline (tsx, OPENAI_BASE_URL at the local Chat
// Completions or Responses server) and must exit 0. Markers and `given` declarations: see
// test/helpers/docBlocks.ts.
//
// The package names resolve to the library's sources (lib/index.ts, lib/subpaths/*.ts,
// lib/integrations/*/index.ts), as in tsconfig.json: npm test builds no dist/, and dist's types
// are emitted from these sources (test/package.test.ts checks that the built types resolve for
// both module kinds). `ai` and its providers resolve to the newest majors (ai 7, @ai-sdk/openai 4),
// the ones the AI SDK guide shows first.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ts from 'typescript';
import { startOpenAIChatServer, type OpenAIChatServer } from '../../examples/servers/openaiChatServer';
import { startOpenAIResponsesServer, type OpenAIResponsesServer } from '../../examples/servers/openaiResponsesServer';
import { docBlocks, type DocBlock } from '../helpers/docBlocks';

const ROOT = path.resolve(__dirname, '..', '..');
const blocks = docBlocks();
const checked = blocks.filter((b) => !b.fragment);
const runnable = blocks.filter((b) => b.runnable);

/** The block's file in the work folder: `docs/batches.md` line 9 → docs-batches.md-L9.mts (ESM, for top-level await). */
const fileOf = (work: string, b: DocBlock): string => path.join(work, `${b.file.replace(/\//g, '-')}-L${b.line}.mts`);

/** The block with its `given` in front; `export {}` makes it a module even without imports. */
const sourceOf = (b: DocBlock): string => `${b.given}\n${b.code}\nexport {};\n`;

/** Where a line of a block's file (0-based) is in the markdown. */
function whereIs(b: DocBlock, line: number): string {
  const givenLines = b.given.split('\n').length;
  return line < givenLines
    ? `${b.file}:${b.line} (the block's given)`
    : `${b.file}:${b.line + 1 + line - givenLines} (the block at line ${b.line})`;
}

/** A folder with the blocks, a tsconfig naming the package's entry points, and node_modules. */
function makeWork(): string {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'doc-blocks-'));
  // Through the link the blocks find the project's packages, and tsx applies the tsconfig's
  // paths (it does not for files inside a node_modules folder).
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(work, 'node_modules'), 'dir');
  const modules = path.join(ROOT, 'node_modules');
  const tsconfig = {
    extends: path.join(ROOT, 'tsconfig.json'),
    compilerOptions: {
      // As an ESM program built by a bundler or run by tsx sees the package: one set of export
      // conditions for the blocks and the library alike (NodeNext would resolve the SDKs' ESM
      // types for the blocks and their CommonJS twins for the library, two unrelated copies);
      // top-level await allowed.
      module: 'preserve',
      moduleResolution: 'bundler',
      types: ['node'],
      paths: {
        'agent-state-machine': [path.join(ROOT, 'lib', 'index.ts')],
        ...Object.fromEntries(
          fs
            .readdirSync(path.join(ROOT, 'lib', 'subpaths'))
            .map((f) => [`agent-state-machine/${f.replace(/\.ts$/, '')}`, [path.join(ROOT, 'lib', 'subpaths', f)]]),
        ),
        'agent-state-machine/*': [path.join(ROOT, 'lib', 'integrations', '*', 'index.ts')],
        ai: [path.join(modules, 'ai-7')],
        '@ai-sdk/provider': [path.join(modules, '@ai-sdk', 'provider-4')],
        '@ai-sdk/openai': [path.join(modules, '@ai-sdk', 'openai-4')],
      },
    },
    files: checked.map((b) => fileOf(work, b)),
  };
  fs.writeFileSync(path.join(work, 'tsconfig.json'), JSON.stringify(tsconfig, null, 2));
  for (const b of checked) fs.writeFileSync(fileOf(work, b), sourceOf(b));
  return work;
}

/** Every type error in the blocks, as `file:line: message`. */
function typeErrors(work: string): string[] {
  const config = ts.getParsedCommandLineOfConfigFile(
    path.join(work, 'tsconfig.json'),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      },
    },
  )!;
  const program = ts.createProgram(config.fileNames, config.options);
  return checked.flatMap((b) => {
    const source = program.getSourceFile(fileOf(work, b));
    if (source === undefined) return [`${b.file}:${b.line}: not in the program`];
    return [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)].map((d) => {
      const { line } = source.getLineAndCharacterOfPosition(d.start ?? 0);
      return `${whereIs(b, line)}: TS${d.code}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
    });
  });
}

/** Runs a block with tsx in `cwd`; resolves after 'close', so every byte of output is in. */
function runBlock(
  work: string,
  b: DocBlock,
  cwd: string,
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [require.resolve('tsx/cli'), fileOf(work, b)], {
      cwd,
      env: { ...process.env, ...env, TSX_TSCONFIG_PATH: path.join(work, 'tsconfig.json') },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('the TypeScript blocks of README.md and docs/', () => {
  let work: string;
  beforeAll(() => {
    work = makeWork();
  });
  afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

  it('finds the blocks, and every marker is on a TypeScript block', () => {
    expect(checked.length).toBeGreaterThanOrEqual(30);
    expect(runnable.length).toBeGreaterThanOrEqual(2);
    expect(blocks.filter((b) => b.runnable && b.fragment)).toEqual([]);
  });

  it('type-check against the package, each as a module of its own', () => {
    const errors = typeErrors(work);
    if (errors.length > 0) throw new Error(`${errors.length} type errors in the docs' blocks:\n${errors.join('\n')}`);
  }, 180_000);

  describe('the runnable ones, offline', () => {
    // A model that calls the first tool it is offered on notes.md, then answers: each
    // conversation makes one tool call. Blocks on the Responses API get that API's server.
    let chat: OpenAIChatServer;
    let responses: OpenAIResponsesServer;
    const usage = { prompt_tokens: 100, completion_tokens: 20 };
    beforeAll(async () => {
      chat = await startOpenAIChatServer({
        respond(body: { messages: { role: string }[]; tools?: { function: { name: string } }[] }) {
          const tool = body.tools?.[0]?.function.name;
          if (body.messages.at(-1)!.role === 'user' && tool !== undefined)
            return { content: '', toolCalls: [{ name: tool, arguments: '{"path":"notes.md"}' }], usage };
          return { content: 'The test expects the old message.', usage };
        },
      });
      responses = await startOpenAIResponsesServer({
        respond(body: { input: { type?: string }[]; tools?: { name: string }[] }) {
          const tool = body.tools?.[0]?.name;
          if (body.input.at(-1)!.type !== 'function_call_output' && tool !== undefined)
            return { toolCalls: [{ name: tool, arguments: '{"path":"notes.md"}' }] };
          return { text: 'The test expects the old message.' };
        },
      });
    });
    afterAll(async () => {
      await chat.close();
      await responses.close();
    });

    it.each(runnable.map((b) => [`${b.file}:${b.line}`, b] as const))(
      '%s exits 0',
      async (_, b) => {
        const server = b.code.includes('fromOpenAIResponses') ? responses : chat;
        const before = server.exchanges.length;
        const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'doc-block-run-'));
        try {
          fs.writeFileSync(path.join(cwd, 'notes.md'), '# notes\n');
          const result = await runBlock(work, b, cwd, { OPENAI_BASE_URL: server.baseURL, OPENAI_API_KEY: 'sk-local' });
          if (result.code !== 0)
            throw new Error(`${b.file}:${b.line} exited ${result.code}:\n${result.stderr}${result.stdout}`);
          // A block on the openai client asked the model: a tool call, then the answer (per task).
          if (b.code.includes("from 'openai'")) expect(server.exchanges.length - before).toBeGreaterThanOrEqual(2);
          expect(chat.rejected).toEqual([]);
          expect(responses.rejected).toEqual([]);
        } finally {
          fs.rmSync(cwd, { recursive: true, force: true });
        }
      },
      60_000,
    );
  });
});
