// AI SDK tool approval on a worker with `drive`, answered in process: the producer's `onApproval`
// and an `attachBatch({ onApproval })` answer a framework run parked on its worker through the
// same Redis records as an adapter run's. One worker of one slot, the real @ai-sdk/openai client
// against the local server: t1 and t3 park at `deploy` (`needsApproval`) and let go of the slot
// (t0 ends meanwhile); t1 approved by the producer (the input given is left out: the framework
// runs the call with its model's), t3 denied by the attached handle, each goes on as the same run.
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, tool, type ModelMessage } from 'ai';
import { z } from 'zod';
import { mirrorAISDK } from '../../../lib/integrations/ai-sdk';
import {
  attachBatch,
  startBatchWorker,
  submitBatch,
  type BatchWorkerHandle,
  type DistributedApprovalRequest,
} from '../../../lib/integrations/bullmq/index';
import { Redis } from 'ioredis';
import { batchKeys } from '../../../lib/integrations/bullmq/batchKeys';
import { aiSdkDeploy } from '../../fixtures/deploy/aiSdkDeploy';
import { chatApprovalServer, type ApprovalServer } from '../../helpers/approvalBatch';
import { deletePrefix, releaseRedis, testRedisUrl, uniquePrefix } from '../../helpers/redis';

let url: string;
beforeAll(async () => {
  url = await testRedisUrl();
});
afterAll(() => releaseRedis());

describe('startBatchWorker({ drive }) with onApproval', () => {
  it("a framework run parked for its tool's needsApproval is answered by onApproval and attachBatch, and goes on as the same run", async () => {
    const prefix = uniquePrefix('fwonapproval');
    const batchId = `fw-onapproval-${process.pid}`;
    const ran: string[] = [];
    let server: ApprovalServer | undefined;
    let worker: BatchWorkerHandle | undefined;
    try {
      server = await chatApprovalServer((content) => JSON.stringify(content));
      const model = createOpenAI({ apiKey: 'sk-local', baseURL: server.baseURL }).chat('gpt-local');
      worker = startBatchWorker({
        connection: url,
        name: 'runs',
        prefix,
        concurrency: 1,
        closeTimeoutMs: 1000,
        onError: false,
        drive: async (task, mirror, { signal }) => {
          const tools = {
            ls: tool({ inputSchema: z.object({ dir: z.string() }), execute: async () => 'a b' }),
            deploy: tool({
              inputSchema: z.object({ target: z.string() }),
              needsApproval: true,
              execute: async ({ target }) => (ran.push(`${task.id} ${target}`), `deployed to ${target}`),
            }),
          };
          const m = mirrorAISDK({ mirror, model, tools, maxRetries: 0 });
          const messages: ModelMessage[] = [{ role: 'user', content: task.input }];
          for (;;) {
            await generateText({ ...m.settings, messages, abortSignal: signal });
            const more = await m.answered();
            if (more === undefined) return;
            messages.push(...more);
          }
        },
      });
      const producerSaw: DistributedApprovalRequest[] = [];
      const attachedSaw: DistributedApprovalRequest[] = [];
      const answers: Array<Promise<void>> = [];
      const batch = await submitBatch(
        ['t0', 't1', 't3'].map((id) => ({ id, input: `task ${id}` })),
        {
          connection: url,
          name: 'runs',
          prefix,
          batchId,
          onApproval: (request) => {
            producerSaw.push(request);
            if (request.id === 't1') answers.push(request.approve('c2', { input: { target: 'elsewhere' } }));
          },
        },
      );
      const attached = await attachBatch({
        connection: url,
        name: 'runs',
        prefix,
        batchId,
        onApproval: (request) => {
          attachedSaw.push(request);
          if (request.id === 't3') answers.push(request.deny('c2', 'not today'));
        },
      });
      const report = await batch.report();
      await Promise.all(answers);
      expect((await attached.report()).runs).toHaveLength(3);
      expect(report.runs.map((r) => [r.id, r.outcome, r.error])).toEqual([
        ['t0', 'end_of_turn', undefined],
        ['t1', 'end_of_turn', undefined],
        ['t3', 'end_of_turn', undefined],
      ]);
      expect(report.runs.map((r) => r.approval?.waits)).toEqual([undefined, 1, 1]);
      // Each handle is told of the requests open when it reads (one answered elsewhere first may be gone).
      for (const [saw, id] of [
        [producerSaw, 't1'],
        [attachedSaw, 't3'],
      ] as const)
        expect(saw.find((r) => r.id === id)?.calls).toEqual([
          { callId: 'c2', name: 'deploy', input: { target: `prod-${id}` } },
        ]);
      // The approved call ran with its model's input, once; the denied one never did, and its model heard why.
      expect(ran).toEqual(['t1 prod-t1']);
      const lastSaid = (id: string): string =>
        JSON.stringify(server!.exchanges.filter((e) => JSON.stringify(e.body).includes(`task ${id}`)).at(-1)!.body);
      expect(lastSaid('t1')).toContain('deployed to prod-t1');
      expect(lastSaid('t3')).toContain('not today');
      const bodies = server.exchanges.map((e) => JSON.stringify(e.body));
      expect(new Set(bodies).size).toBe(bodies.length);
      expect(bodies).toHaveLength(6);
    } finally {
      await worker?.close();
      await server?.close();
      await deletePrefix(url, prefix);
    }
  }, 60_000);

  it("the worker's approvalTimeoutMs ends a framework run left unanswered: ApprovalTimedOut, cancelled, its call not run, its request closed, reported once", async () => {
    const prefix = uniquePrefix('fwtimeout');
    let server: ApprovalServer | undefined;
    let worker: BatchWorkerHandle | undefined;
    try {
      server = await chatApprovalServer((content) => JSON.stringify(content));
      worker = startBatchWorker({
        connection: url,
        name: 'runs',
        prefix,
        concurrency: 1,
        closeTimeoutMs: 1000,
        onError: false,
        approvalTimeoutMs: 300,
        drive: (task, mirror, ctx) => aiSdkDeploy(task.id, server!.baseURL)(mirror, ctx),
      });
      const out = jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
      let report;
      try {
        const batch = await submitBatch(
          ['t0', 't1'].map((id) => ({ id, input: `task ${id}` })),
          { connection: url, name: 'runs', prefix },
        );
        report = await batch.report();
        expect(out.mock.calls.map(([t]) => String(t)).filter((t) => t.startsWith('ran deploy'))).toEqual([]);
      } finally {
        out.mockRestore();
      }
      expect(report.runs.map((r) => [r.id, r.outcome])).toEqual([
        ['t0', 'end_of_turn'],
        ['t1', 'cancelled'],
      ]);
      expect(report.runs[1]!.error?.message).toContain('no answer to the approval request within 300 ms');
      expect(report.runs[1]!.approval).toMatchObject({ waits: 1, calls: 1 });
      // t1 sent its first request only.
      expect(server.exchanges.filter((e) => JSON.stringify(e.body).includes('task t1'))).toHaveLength(1);
      // Nothing left to answer.
      const redis = new Redis(url);
      try {
        expect(await redis.hlen(batchKeys(prefix, 'runs', report.batchId!).approvals)).toBe(0);
      } finally {
        redis.disconnect();
      }
    } finally {
      await worker?.close();
      await server?.close();
      await deletePrefix(url, prefix);
    }
  }, 60_000);
});
