// A worker's framework run parked for its framework's own approval (parkRun's
// `awaitFrameworkPause` on the FrameworkTurn runFrameworkTask hands it): an AI SDK run whose tool
// has `needsApproval` asks through the run's approvals (the Redis side, here in memory), lets go
// of its slot while it waits, takes one again once answered, and goes on as the same run: an
// approved call runs, a denied one does not and its model hears why. The real @ai-sdk/openai
// client against the local server; no Redis.
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, tool, type ModelMessage } from 'ai';
import { z } from 'zod';
import type { ApprovalDecision } from 'agent-state-machine';
import { runTask } from '../../../lib/batch/tasks/runTask';
import { mirrorAISDK } from '../../../lib/integrations/ai-sdk';
import { ParkWatch } from '../../../lib/integrations/bullmq/ParkWatch';
import { parkRun, type RunApprovals } from '../../../lib/integrations/bullmq/parkRun';
import { WorkerSlots } from '../../../lib/integrations/bullmq/WorkerSlots';
import { startOpenAIChatServer, type OpenAIChatServer } from '../../../examples/servers/openaiChatServer';

let server: OpenAIChatServer;
beforeEach(async () => {
  server = await startOpenAIChatServer({
    respond: (body: { messages: Array<{ role: string; content: unknown }> }) => {
      const results = body.messages.filter((m) => m.role === 'tool');
      if (results.length > 0) return { content: `done: ${results.map((m) => JSON.stringify(m.content)).join(' | ')}` };
      return { toolCalls: [{ id: 'c1', name: 'deploy', arguments: '{"target":"prod"}' }] };
    },
  });
});
afterEach(() => server.close());

/** One framework run on a worker of one slot, its approvals answered with `answer` once it has let go of its slot. */
async function parkedFrameworkRun(answer: ApprovalDecision) {
  const slots = new WorkerSlots(1);
  const watch = new ParkWatch((error) => {
    throw error;
  });
  const asked: unknown[] = [];
  const closed: string[] = [];
  const ran: string[] = [];
  let give!: (answers: ApprovalDecision[]) => void;
  const answers = new Promise<ApprovalDecision[]>((resolve) => (give = resolve));
  const approvals: RunApprovals = {
    ask: (park, calls) => (asked.push({ park, calls }), Promise.resolve()),
    answers: () => answers,
    close: (park, ids) => (closed.push(`${park}:${ids.join(',')}`), Promise.resolve()),
  };
  const problems: string[] = [];
  await slots.take();
  const parking = parkRun({
    slots,
    watch,
    budgetKey: 'budget',
    readRaises: () => Promise.resolve(0),
    approvals,
    signal: new AbortController().signal,
    end: (reason) => problems.push(`ended: ${reason}`),
    onSlot: () => undefined,
    onProblem: (message) => problems.push(message),
  });
  const model = createOpenAI({ apiKey: 'sk-local', baseURL: server.baseURL }).chat('gpt-local');
  const run = runTask(
    {
      id: 't1',
      input: 'ship it',
      drive: async (mirror) => {
        const deploy = tool({
          inputSchema: z.object({ target: z.string() }),
          needsApproval: true,
          execute: async ({ target }) => (ran.push(target), `deployed to ${target}`),
        });
        const m = mirrorAISDK({ mirror, model, tools: { deploy }, maxRetries: 0 });
        const messages: ModelMessage[] = [{ role: 'user', content: 'ship it' }];
        for (;;) {
          await generateText({ ...m.settings, messages });
          const more = await m.answered();
          if (more === undefined) return;
          messages.push(...more);
        }
      },
    },
    { adapter: { logger: false }, awaitFrameworkPause: parking.awaitFrameworkPause },
  );
  try {
    // A run that could not park ends instead (in Error, saying why).
    const first = await Promise.race([parking.parked.then(() => 'parked'), run]);
    expect(first).toBe('parked');
    // Parked: its request asked, its slot free for another run.
    expect(asked).toEqual([{ park: 1, calls: [{ callId: 'c1', name: 'deploy', input: { target: 'prod' } }] }]);
    expect(parking.inSlot).toBe(false);
    expect(slots.taken).toBe(0);
    give([answer]);
    const result = await run;
    expect(parking.inSlot).toBe(true);
    expect(slots.taken).toBe(1);
    expect(closed).toEqual(['1:c1']);
    expect(problems).toEqual([]);
    expect(parking.approvalWait()).toMatchObject({ waits: 1, calls: 1 });
    return { result, ran };
  } finally {
    watch.close();
  }
}

describe('parkRun with a framework run (awaitFrameworkPause)', () => {
  it('approved: the run lets go of its slot while it waits, takes one again, and the same run runs the call and ends', async () => {
    const { result, ran } = await parkedFrameworkRun({ callId: 'c1', approved: true, by: 'alice' });
    expect(result).toMatchObject({ outcome: 'end_of_turn' });
    expect(result.error).toBeUndefined();
    expect(ran).toEqual(['prod']);
    expect(server.exchanges).toHaveLength(2);
    expect(JSON.stringify(server.exchanges[1]!.body)).toContain('deployed to prod');
  });

  it('denied: the call never runs and the model hears the reason', async () => {
    const { result, ran } = await parkedFrameworkRun({ callId: 'c1', approved: false, reason: 'not on prod' });
    expect(result).toMatchObject({ outcome: 'end_of_turn' });
    expect(ran).toEqual([]);
    expect(server.exchanges).toHaveLength(2);
    expect(JSON.stringify(server.exchanges[1]!.body)).toContain('not on prod');
  });
});
