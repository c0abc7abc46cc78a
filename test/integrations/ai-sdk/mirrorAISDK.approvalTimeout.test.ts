// `approvalTimeoutMs` on framework runs: an AI SDK run parked for its tool's `needsApproval`
// (the real @ai-sdk/openai client against the local server) that gets no answer in time ends
// in ApprovalTimedOut as `cancelled`, as an adapter run does, its waiting call never run and no
// further request sent; one answered in time goes on. In runBatch (folder), and on a mirror of
// its own (mirrorAISDK). A timeout without approvals, or not a number, is refused by name.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, tool, type ModelMessage } from 'ai';
import { z } from 'zod';
import { InvalidArgumentError, runBatch, StepMirror } from '../../../lib/index';
import { mirrorAISDK } from '../../../lib/integrations/ai-sdk';
import { loadHistory, validateHistory } from '../../../lib/subpaths/history';
import { aiSdkDeploy } from '../../fixtures/deploy/aiSdkDeploy';
import { chatApprovalServer, type ApprovalServer } from '../../helpers/approvalBatch';

let server: ApprovalServer;
let dir: string;
let out: jest.SpyInstance;
beforeEach(async () => {
  server = await chatApprovalServer((content) => JSON.stringify(content));
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-fw-timeout-'));
  // The deploy task says `ran deploy <id>` on stdout when its tool runs.
  out = jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
});
afterEach(async () => {
  out.mockRestore();
  await server.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const ranDeploys = (): string[] =>
  out.mock.calls.map(([text]) => String(text)).filter((t) => t.startsWith('ran deploy'));

describe('approvalTimeoutMs on a framework run', () => {
  it('runBatch: a run left unanswered ends in ApprovalTimedOut, cancelled, its deploy never run; one answered in time goes on', async () => {
    const report = await runBatch(
      ['t0', 't1', 't3'].map((id) => ({ id, input: `task ${id}`, drive: aiSdkDeploy(id, server.baseURL) })),
      {
        historyDir: dir,
        concurrency: 3,
        logger: false,
        approvalTimeoutMs: 1000,
        // t3 is approved at once; t1 is never answered.
        onApproval: ({ id, approve }) => {
          if (id === 't3') approve('c2');
        },
      },
    );
    expect(report.runs.map((r) => [r.id, r.outcome])).toEqual([
      ['t0', 'end_of_turn'],
      ['t1', 'cancelled'],
      ['t3', 'end_of_turn'],
    ]);
    const t1 = report.runs[1]!;
    expect(t1.error?.message).toContain('no answer to the approval request within 1000 ms');
    expect(t1.approval).toMatchObject({ waits: 1, calls: 1 });
    expect(ranDeploys()).toEqual(['ran deploy t3\n']);
    // t1 sent its first request only: nothing after the wait.
    const t1Requests = server.exchanges.filter((e) => JSON.stringify(e.body).includes('task t1'));
    expect(t1Requests).toHaveLength(1);
    const history = await loadHistory(path.join(dir, 't1.jsonl'));
    expect(validateHistory(history.entries, history.table).issues).toEqual([]);
    const moves = history.entries.filter((e) => e.kind === 'record').map((e) => e.record.to);
    expect(moves.slice(-2)).toEqual(['AwaitingApproval', 'ApprovalTimedOut']);
    const waited = history.entries.find((e) => e.kind === 'record' && e.record.to === 'AwaitingApproval');
    expect(waited?.kind === 'record' && (waited.record.data as Record<string, unknown>)['timeoutMs']).toBe(1000);
  });

  it('mirrorAISDK: the run ends in ApprovalTimedOut on its own, and answered() resolves with nothing to send', async () => {
    const ran: string[] = [];
    const m = mirrorAISDK({
      model: createOpenAI({ apiKey: 'sk', baseURL: server.baseURL }).chat('gpt-local'),
      tools: {
        ls: tool({ inputSchema: z.object({ dir: z.string() }), execute: async () => 'a b' }),
        deploy: tool({
          inputSchema: z.object({ target: z.string() }),
          needsApproval: true,
          execute: async () => (ran.push('deploy'), 'deployed'),
        }),
      },
      approvalTimeoutMs: 100,
      logger: false,
    });
    const messages: ModelMessage[] = [{ role: 'user', content: 'task t1' }];
    await generateText({ ...m.settings, messages, maxOutputTokens: 500 });
    expect(m.mirror.approvals.waiting).toBe(true);
    expect(await m.answered()).toBeUndefined();
    expect(m.mirror.result?.outcome).toBe('cancelled');
    expect(m.mirror.machine.current).toBe('ApprovalTimedOut');
    expect(ran).toEqual([]);
    expect(server.exchanges).toHaveLength(1);
  });

  it('refuses by name a timeout without approvals, and one that is no number of milliseconds', () => {
    expect(() => new StepMirror({ approvalTimeoutMs: 10 })).toThrow(InvalidArgumentError);
    expect(() => new StepMirror({ approvalTimeoutMs: 10 })).toThrow(/`approvalTimeoutMs`.*unless `approvals` is true/);
    expect(() => new StepMirror({ approvals: true, approvalTimeoutMs: -1 })).toThrow(
      /`approvalTimeoutMs` to be a non-negative number of milliseconds/,
    );
  });
});
