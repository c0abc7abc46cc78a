import { createOpenAI } from '@ai-sdk/openai';
import { generateText } from 'ai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { AgentWithStateMachine } from 'agent-state-machine';
import { JsonlHistorySink, loadHistory } from 'agent-state-machine/history';
import { fromAISDK, mirrorAISDK } from '../../../lib/integrations/ai-sdk';
import {
  startOpenAIChatServer,
  type ChatAction,
  type OpenAIChatServer,
} from '../../../examples/servers/openaiChatServer';
import { runCli } from '../../helpers/runCli';

// The HTTP status of a failed model call through the AI SDK (its APICallError keeps it in
// `statusCode`, not in its message) is in each failure record, in the run's reason and in what
// `agent-sm inspect` shows, as an openai run's is; and the adapter's retries go by it. The real
// @ai-sdk/openai provider against a local server that answers 429, then 500, then 400.

let server: OpenAIChatServer | undefined;
let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'asm-ai-status-'));
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  fs.rmSync(dir, { recursive: true, force: true });
});

// `retry-after-ms: 0`: the AI SDK's own retries (mirrorAISDK) then do not wait.
const now = { 'retry-after-ms': '0' };
const SCRIPT: ChatAction[] = [
  { error: { status: 429, message: 'Rate limit reached for gpt-4.1', type: 'requests', headers: now } },
  { error: { status: 500, message: 'The server had an error', headers: now } },
  { error: { status: 400, message: 'Invalid value for messages', type: 'invalid_request_error' } },
  { content: 'never asked for' },
];

async function serve(): Promise<OpenAIChatServer> {
  server = await startOpenAIChatServer({
    respond: (_body, i) => SCRIPT[i] ?? { error: { status: 500, message: `script has no reply ${i}` } },
  });
  return server;
}

const modelOf = (s: OpenAIChatServer) => createOpenAI({ apiKey: 'sk-local', baseURL: s.baseURL }).chat('gpt-4.1');

/** The failure records of the history file's moves, as [attempt, error]. */
async function failuresIn(file: string): Promise<Array<[number, string]>> {
  const history = await loadHistory(file);
  const failures = history.records.flatMap(
    (r) => (r.data as { failures?: Array<{ attempt: number; error: string }> } | undefined)?.failures ?? [],
  );
  return failures.map((f) => [f.attempt, f.error]);
}

const EXPECTED_FAILURES: Array<[number, string]> = [
  [1, '429 Rate limit reached for gpt-4.1'],
  [2, '500 The server had an error'],
  [3, '400 Invalid value for messages'],
];

describe('the HTTP status of an AI SDK error is kept', () => {
  it('fromAISDK: in each failure record and the reason; 429 and 500 are retried, the 400 is not', async () => {
    const s = await serve();
    const file = path.join(dir, 'run.jsonl');
    const sink = JsonlHistorySink.open(file, { runId: 'r' });
    const agent = new AgentWithStateMachine(fromAISDK({ model: modelOf(s) }), {
      sink,
      journal: true,
      logger: false,
      retry: { retries: 5, baseDelayMs: 0 },
      sleep: () => Promise.resolve(),
    });
    const result = await agent.runTurn('Hi');
    sink.close();
    expect(result.outcome).toBe('error');
    // The 400 ended it: no fourth request, though five retries were allowed.
    expect(s.exchanges).toHaveLength(3);
    expect(result.error?.message).toBe('sendUserMessage failed after 3 attempts: 400 Invalid value for messages');
    expect(await failuresIn(file)).toEqual(EXPECTED_FAILURES);
    // The journal keeps the status as a number, too.
    const history = await loadHistory(file);
    expect(history.journal.flatMap((j) => (j as { error?: { status?: number } }).error?.status ?? [])).toEqual([
      429, 500, 400,
    ]);

    const inspected = await runCli('inspect', file);
    expect(inspected.stdout).toContain(
      'why:   sendUserMessage failed after 3 attempts: 400 Invalid value for messages',
    );
    expect(inspected.stdout).toContain('"error":"429 Rate limit reached for gpt-4.1"');
  });

  it('mirrorAISDK: the SDK retries the 429 and the 500 and gives up on the 400; the records say which was which', async () => {
    const s = await serve();
    const file = path.join(dir, 'mirror.jsonl');
    const m = mirrorAISDK({ model: modelOf(s), historyFile: file, logger: false });
    await expect(generateText({ ...m.settings, prompt: 'Hi', maxRetries: 5 })).rejects.toThrow();
    m.close();
    expect(s.exchanges).toHaveLength(3);
    expect(m.result).toMatchObject({ outcome: 'error' });
    expect(m.result?.error?.message).toBe('sendUserMessage failed after 3 attempts: 400 Invalid value for messages');
    expect(await failuresIn(file)).toEqual(EXPECTED_FAILURES);
    const inspected = await runCli('inspect', file);
    expect(inspected.stdout).toContain(
      'why:   sendUserMessage failed after 3 attempts: 400 Invalid value for messages',
    );
    expect(inspected.stdout).toContain('"error":"500 The server had an error"');
  });
});
