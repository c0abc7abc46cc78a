// Fifty Agents SDK runs as one batch under one shared dollar cap: the cap stops them, every
// history file validates, and the batch report draws them.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Agent, setTracingDisabled, tool } from '@openai/agents';
import { z } from 'zod';
import { runBatch } from 'agent-state-machine';
import { AgentsMirror } from '../../../lib/integrations/openai-agents';
import { cannedModel, type CannedModel } from './cannedModel';
import { expectBatchStoppedByCap, expectStrictBatchWithinCap } from '../../helpers/frameworkRuns';

setTracingDisabled(true);

const echo = tool({
  name: 'echo',
  description: 'Echoes its text',
  parameters: z.object({ text: z.string() }),
  execute: async ({ text }) => `echo: ${text}`,
});

// $1 per million input tokens, $4 per million output: each call below costs $0.0014.
const pricing = (u: { inputTokens?: number; outputTokens?: number }): number =>
  ((u.inputTokens ?? 0) * 1 + (u.outputTokens ?? 0) * 4) / 1e6;
const CALL = 0.0014;
const CAP = 0.05;
const CONCURRENCY = 4;

let dir: string;
beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'asm-agents-batch-'))));
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('a batch of Agents SDK runs', () => {
  it('runs 50 agents under one shared dollar cap that stops them; every file validates and the report draws', async () => {
    const models: CannedModel[] = [];
    const tasks = Array.from({ length: 50 }, (_, i) => {
      const model = cannedModel([
        { calls: [{ id: `c${i}`, name: 'echo', args: { text: `t${i}` } }], inputTokens: 1000, outputTokens: 100 },
        { text: `done ${i}`, inputTokens: 1000, outputTokens: 100 },
      ]);
      models.push(model);
      const agent = new Agent({ name: `agent-${i}`, model, tools: [echo] });
      return { id: `task-${String(i).padStart(2, '0')}`, input: `task ${i}`, agent };
    });
    const report = await runBatch(
      tasks.map(({ id, input, agent }) => ({
        id,
        input,
        drive: (mirror) => new AgentsMirror({ mirror }).run(agent, input),
      })),
      {
        concurrency: CONCURRENCY,
        total: { maxCostUsd: CAP, strict: false },
        pricing,
        historyDir: dir,
        journal: true,
        logger: false,
      },
    );

    await expectBatchStoppedByCap(report, dir, {
      tasks: 50,
      cap: CAP,
      concurrency: CONCURRENCY,
      callsMade: models.reduce((n, m) => n + m.requests.length, 0),
      costPerCall: CALL,
    });
  }, 60_000);

  it('under a strict shared cap, no call whose worst case would pass the cap is made: spend ends within the cap', async () => {
    const models: CannedModel[] = [];
    const tasks = Array.from({ length: 50 }, (_, i) => {
      // Reported input stays below the request's bound (its serialized size), as a provider's count does.
      const model = cannedModel([
        { calls: [{ id: `c${i}`, name: 'echo', args: { text: `t${i}` } }], inputTokens: 200, outputTokens: 100 },
        { text: `done ${i}`, inputTokens: 200, outputTokens: 100 },
      ]);
      models.push(model);
      const agent = new Agent({ name: `agent-${i}`, model, tools: [echo], modelSettings: { maxTokens: 100 } });
      return { id: `task-${String(i).padStart(2, '0')}`, input: `task ${i}`, agent };
    });
    const report = await runBatch(
      tasks.map(({ id, input, agent }) => ({
        id,
        input,
        drive: (mirror) => new AgentsMirror({ mirror }).run(agent, input),
      })),
      {
        concurrency: CONCURRENCY,
        total: { maxCostUsd: CAP, strict: true },
        pricing,
        historyDir: dir,
        journal: true,
        logger: false,
      },
    );
    await expectStrictBatchWithinCap(report, dir, {
      cap: CAP,
      callsMade: models.reduce((n, m) => n + m.requests.length, 0),
      costPerCall: 0.0006,
    });
  }, 60_000);
});
