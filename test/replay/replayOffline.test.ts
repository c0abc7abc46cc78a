// A failed run of the real openai SDK loop, recorded with the journal, replayed with the server
// gone and every way out of the process watched: no socket is opened, and the moves match.
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import OpenAI from 'openai';
import { startOpenAIChatServer } from '../../examples/servers/openaiChatServer';
import { AgentWithStateMachine } from '../../lib/agent/AgentWithStateMachine';
import { JsonlHistorySink } from '../../lib/history/JsonlHistorySink';
import { loadHistory } from '../../lib/history/loadHistory';
import { fromOpenAIChat } from '../../lib/integrations/openai';
import { replayRun } from '../../lib/replay/replayRun';
import { runCli } from '../helpers/runCli';

let dir: string;
beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-offline-'))));
afterEach(() => {
  jest.restoreAllMocks();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Records a run that fails: a tool call, the tool's error, then the provider failing on every attempt. */
async function recordFailedRun(file: string): Promise<void> {
  const server = await startOpenAIChatServer({
    respond: (_body, index) =>
      index === 0
        ? {
            toolCalls: [{ id: 'call_1', name: 'deploy', arguments: '{"env":"prod"}' }],
            usage: { prompt_tokens: 50, completion_tokens: 9, cost: 0.002 },
          }
        : { error: { status: 503, message: 'The server is overloaded.', type: 'server_error', code: 'overloaded' } },
  });
  const sink = JsonlHistorySink.open(file, { runId: 'failed' });
  try {
    const loop = fromOpenAIChat(new OpenAI({ apiKey: 'sk-local', baseURL: server.baseURL }), {
      model: 'gpt-local',
      tools: {
        deploy: {
          parameters: { type: 'object', properties: { env: { type: 'string' } } },
          run: () => {
            throw new Error('permission denied');
          },
        },
      },
    });
    const agent = new AgentWithStateMachine(loop, {
      sink,
      journal: true,
      logger: false,
      retry: { retries: 2 },
      sleep: async () => undefined,
    });
    const result = await agent.runTurn('deploy to prod');
    expect(result.outcome).toBe('error');
  } finally {
    sink.close();
    await server.close();
  }
}

describe('a failed run replayed with the network closed', () => {
  it('opens no socket and makes the recorded moves, from the API and the CLI', async () => {
    const file = path.join(dir, 'failed.jsonl');
    await recordFailedRun(file);
    const loaded = await loadHistory(file);
    expect(loaded.records.at(-1)!.to).toBe('Error');
    // Every way out: TCP and IPC connections, and fetch.
    const connect = jest.spyOn(net.Socket.prototype, 'connect');
    const fetch = jest.spyOn(globalThis, 'fetch');

    const report = await replayRun(loaded);
    expect(report).toMatchObject({ reproduced: true, outcomes: ['error'], llmCalls: 4 });
    expect(report.replayedMoves).toBe(loaded.records.length);
    expect(report.usage).toMatchObject({ llmCalls: 4, toolCalls: 1, costUsd: 0.002 });

    const cli = await runCli('replay', file);
    expect(cli.code).toBe(0);
    expect(cli.stdout).toMatch(/reproduc/i);
    expect({ connects: connect.mock.calls.length, fetches: fetch.mock.calls.length }).toEqual({
      connects: 0,
      fetches: 0,
    });
  });
});
