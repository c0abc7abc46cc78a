import { execFile } from 'node:child_process';
import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import type { OpenAIChatTool } from '../../lib/integrations/openai';

/**
 * The small coding agent's workspace and tools: a temp folder holding a tiny project with a
 * failing test, and `read_file`, `list_files`, `bash` confined to it. The same tools serve
 * the OpenAI and the Anthropic example (both SDK loops take this shape).
 */

/** Creates the temp folder with the project in it; returns its path. */
export async function makeWorkspace(): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'agent-sm-coding-'));
  await fs.writeFile(path.join(dir, 'math.js'), 'exports.add = (a, b) => a - b;\n');
  await fs.writeFile(
    path.join(dir, 'test.js'),
    "const assert = require('node:assert');\nconst { add } = require('./math');\nassert.strictEqual(add(2, 3), 5);\nconsole.log('ok');\n",
  );
  return dir;
}

const MAX_OUTPUT = 4000;
const cut = (text: string): string =>
  text.length > MAX_OUTPUT ? `${text.slice(0, MAX_OUTPUT)}\n… (${text.length - MAX_OUTPUT} more characters)` : text;

/** Resolves `file` inside `dir`, refusing paths that leave it. */
function inside(dir: string, file: unknown): string {
  if (typeof file !== 'string' || file === '') throw new Error('`path` must be a non-empty string');
  const full = path.resolve(dir, file);
  if (full !== dir && !full.startsWith(dir + path.sep)) throw new Error(`${file} is outside the workspace`);
  return full;
}

/** `read_file`, `list_files` and `bash`, each working in `dir` and stopping when the turn's signal aborts. */
export function codingTools(dir: string): Record<string, OpenAIChatTool> {
  return {
    list_files: {
      description: 'Lists the files of the project.',
      parameters: { type: 'object', properties: {}, additionalProperties: false },
      run: async () => (await fs.readdir(dir)).sort().join('\n'),
    },
    read_file: {
      description: 'Reads one file of the project.',
      parameters: {
        type: 'object',
        properties: { path: { type: 'string', description: 'relative to the project' } },
        required: ['path'],
        additionalProperties: false,
      },
      run: async (input: { path: string }, { signal }) =>
        cut(await fs.readFile(inside(dir, input.path), { encoding: 'utf8', signal })),
    },
    bash: {
      description: 'Runs a bash command in the project folder (30 s limit) and returns its exit code and output.',
      parameters: {
        type: 'object',
        properties: { command: { type: 'string' } },
        required: ['command'],
        additionalProperties: false,
      },
      run: (input: { command: string }, { signal }) =>
        new Promise((resolve) => {
          execFile(
            'bash',
            ['-c', String(input.command)],
            { cwd: dir, timeout: 30_000, signal, maxBuffer: 1 << 20 },
            (error, stdout, stderr) => {
              const code = error ? ((error as { code?: unknown }).code ?? 1) : 0;
              resolve(cut(`exit code ${String(code)}\n${stdout}${stderr}`));
            },
          );
        }),
    },
  };
}

/** What the offline "model" does next, given the tool outputs of this turn so far: the same plan whichever protocol carries it. */
export function scriptedStep(
  outputs: string[],
): { call: { name: string; input: Record<string, unknown> }; say?: string } | { say: string } {
  switch (outputs.length) {
    case 0:
      return { say: 'Let me look at the project.', call: { name: 'list_files', input: {} } };
    case 1:
      return { call: { name: 'bash', input: { command: 'node test.js' } } };
    case 2:
      return { call: { name: 'read_file', input: { path: 'math.js' } } };
    default: {
      const failed = /AssertionError/.test(outputs[1] ?? '');
      return {
        say: failed
          ? 'The test fails: `add(2, 3)` returns -1 because math.js computes `a - b`. Change it to `a + b` and `node test.js` prints ok.'
          : `The test passes:\n${outputs[1] ?? ''}`,
      };
    }
  }
}
