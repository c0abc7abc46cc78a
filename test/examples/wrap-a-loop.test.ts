// examples/wrap-a-loop.ts as users run it: `tsx examples/wrap-a-loop.ts` in a child process, with
// the real `openai` client (6, or 7 in the ai7-openai7 project) pointed by OPENAI_BASE_URL at the
// local Chat Completions server, which rejects what the real API rejects. And the README's first
// example is that file, so the docs cannot drift from what runs.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { VERSION as OPENAI_VERSION } from 'openai/version';
import { loadHistory, validateHistory } from 'agent-state-machine/history';
import { startOpenAIChatServer, type OpenAIChatServer } from '../../examples/servers/openaiChatServer';

const ROOT = path.join(__dirname, '..', '..');
const EXAMPLE = path.join(ROOT, 'examples', 'wrap-a-loop.ts');
// Mapped to openai-7 in the ai7-openai7 project; the child then loads openai 7 through the tsconfig that maps it.
const openaiMajor = Number(OPENAI_VERSION.split('.')[0]);
const TSCONFIG = path.join(ROOT, openaiMajor >= 7 ? 'tsconfig.v7.json' : 'tsconfig.json');

/** Runs the example with `cwd` as its folder; resolves after 'close', so every byte of output is in. */
function runExample(cwd: string, baseURL: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [require.resolve('tsx/cli'), EXAMPLE], {
      cwd,
      env: { ...process.env, OPENAI_BASE_URL: baseURL, OPENAI_API_KEY: 'sk-local', TSX_TSCONFIG_PATH: TSCONFIG },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe(`examples/wrap-a-loop (openai ${openaiMajor})`, () => {
  let dir: string;
  let server: OpenAIChatServer;
  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wrap-a-loop-'));
    fs.writeFileSync(path.join(dir, 'notes.md'), '# notes\n');
    fs.writeFileSync(path.join(dir, 'todo.txt'), 'ship it\n');
    server = await startOpenAIChatServer({
      respond(body: { messages: { role: string; content?: string }[] }, index) {
        // An overloaded server first: the adapter retries it, and only the adapter.
        if (index === 0) return { error: { status: 500, message: 'The server had an error', type: 'server_error' } };
        const last = body.messages.at(-1)!;
        if (last.role !== 'tool')
          return {
            content: 'Let me look.',
            toolCalls: [{ name: 'list_files', arguments: '{"path":"."}' }],
            usage: { prompt_tokens: 120, completion_tokens: 20 },
          };
        return {
          content: `The folder holds ${String(last.content).split('\n').join(' and ')}.`,
          usage: { prompt_tokens: 180, completion_tokens: 15 },
        };
      },
    });
  });
  afterEach(async () => {
    await server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('runs the turn to its end through a retry and a tool call, and leaves a valid history file', async () => {
    const { code, stdout, stderr } = await runExample(dir, server.baseURL);
    expect(code).toBe(0);
    // The one thing logged: the adapter's retry of the 500.
    expect(stderr.trimEnd().split('\n')).toEqual([
      expect.stringMatching(
        / warn: sendUserMessage attempt 1 failed \(500 The server had an error\); retrying in \d+ ms/,
      ),
    ]);
    expect(server.rejected).toEqual([]);
    const files = fs.readdirSync(dir).filter((f) => /^run-\d+\.jsonl$/.test(f));
    expect(files).toHaveLength(1);
    const file = files[0]!;
    // The tool ran, in the example's folder (its history file is there already), and its result went back to the model.
    const toolMessage = server.exchanges.at(-1)!.body.messages.find((m: { role: string }) => m.role === 'tool');
    expect(toolMessage.content).toBe(`notes.md\n${file}\ntodo.txt`);
    const history = await loadHistory(path.join(dir, file));
    // The 500 came after the request left: under the (strict) cap it is charged its whole hold,
    // the worst case its llmCallBound gave, and says so.
    const failed = history.journal.find(
      (j) => j.type === 'llm' && j.attempt === 1 && j.operation === 'sendUserMessage',
    );
    expect(failed).toMatchObject({ chargedAtHold: expect.any(String), costUsd: expect.any(Number) });
    const held = (failed as { costUsd: number }).costUsd;
    expect(held).toBeGreaterThan(1024 * 0.6e-6); // at least its max output tokens, priced
    const lines = stdout.trimEnd().split('\n');
    expect(lines).toEqual([
      `end_of_turn: The folder holds notes.md and ${file} and todo.txt.`,
      // (120 + 180) × $0.15 + (20 + 15) × $0.60 per million tokens, and the failed attempt's hold.
      `cost $${(0.000066 + held).toFixed(6)}, LLM calls: 3 (retries included), tool calls: 1`,
      `Every move and request is in ${file}: npx agent-sm show ${file}`,
    ]);

    const validation = validateHistory(history.entries);
    expect(validation).toMatchObject({ ok: true, issues: [] });
    expect(validation.interrupted).toBeUndefined();
    expect(history.records.at(-1)).toMatchObject({ from: 'ProcessingLLMResponse', to: 'EndOfTurn' });
    const attempts = history.journal.filter((j) => j.type === 'llm');
    expect(attempts.map((a) => [a.operation, a.attempt])).toEqual([
      ['sendUserMessage', 1],
      ['sendUserMessage', 2],
      ['sendToolResults', 1],
    ]);
    // The SDK's retries are off: every request the server got is an attempt in the history.
    expect(server.exchanges.length).toBeLessThanOrEqual(attempts.length);
    expect(server.exchanges).toHaveLength(3);
  }, 60_000);
});

describe('README: wrap an existing loop', () => {
  it('shows examples/wrap-a-loop.ts exactly as it is', () => {
    const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('\n### Full control: the callback adapter\n'));
    const block = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
    expect(block).toBe(fs.readFileSync(EXAMPLE, 'utf8'));
  });
});
