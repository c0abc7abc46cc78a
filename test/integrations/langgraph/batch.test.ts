// Fifty LangGraph ReAct agents as one batch under one shared dollar cap: the cap stops them,
// every history file validates, and the batch report draws them. Each holds whether the mirror
// rides the graph's callbacks (observe 'graph') or hears only the model and tools it wrapped
// (observe 'wrapped'; each agent is built in its task's drive, on the wrappers of that run's mirror).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { tool } from '@langchain/core/tools';
import { createReactAgent } from '@langchain/langgraph/prebuilt';
import { z } from 'zod';
import { runBatch } from 'agent-state-machine';
import { LangGraphMirror, type LangGraphObserve } from '../../../lib/integrations/langgraph';
import { ScriptedChatModel } from './scriptedChatModel';
import { expectBatchStoppedByCap, expectStrictBatchWithinCap } from '../../helpers/frameworkRuns';

const echo = tool(async ({ text }: { text: string }) => `echo: ${text}`, {
  name: 'echo',
  description: 'Echoes its text',
  schema: z.object({ text: z.string() }),
});

// $1 per million input tokens, $4 per million output: each call below costs $0.0014.
const pricing = (u: { inputTokens?: number; outputTokens?: number }): number =>
  ((u.inputTokens ?? 0) * 1 + (u.outputTokens ?? 0) * 4) / 1e6;
const CALL = 0.0014;
const CAP = 0.05;
const CONCURRENCY = 4;

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'asm-langgraph-batch-'));
  // LangChain logs each error a raising handler throws (a refused call) with console.error.
  jest.spyOn(console, 'error').mockImplementation(() => undefined);
});
afterEach(() => {
  jest.restoreAllMocks();
  fs.rmSync(dir, { recursive: true, force: true });
});

type Run = (mirror: LangGraphMirror['mirror']) => Promise<unknown>;

/**
 * The run of a ReAct agent on `llm` asked `input`: observing the graph, the agent is built once and
 * each run gives it a mirror; observing 'wrapped', each run builds it on its own mirror's wrappers.
 */
function agentRun(observe: LangGraphObserve, llm: ScriptedChatModel, input: string): Run {
  const messages = { messages: [{ role: 'user', content: input }] };
  if (observe === 'graph') {
    const agent = createReactAgent({ llm, tools: [echo] });
    return (mirror) => new LangGraphMirror({ mirror }).run(agent, messages);
  }
  return (mirror) => {
    const lg = new LangGraphMirror({ mirror, observe });
    return lg.run(createReactAgent({ llm: lg.wrapModel(llm), tools: lg.wrapTools([echo]) }), messages);
  };
}

describe.each<LangGraphObserve>(['graph', 'wrapped'])("a batch of LangGraph agents (observe '%s')", (observe) => {
  it('runs 50 ReAct agents under one shared dollar cap that stops them; every file validates and the report draws', async () => {
    const models: ScriptedChatModel[] = [];
    const tasks = Array.from({ length: 50 }, (_, i) => {
      const llm = new ScriptedChatModel([
        { calls: [{ id: `c${i}`, name: 'echo', args: { text: `t${i}` } }], inputTokens: 1000, outputTokens: 100 },
        { text: `done ${i}`, inputTokens: 1000, outputTokens: 100 },
      ]);
      models.push(llm);
      const input = `task ${i}`;
      return { id: `task-${String(i).padStart(2, '0')}`, input, drive: agentRun(observe, llm, input) };
    });
    const report = await runBatch(tasks, {
      concurrency: CONCURRENCY,
      total: { maxCostUsd: CAP, strict: false },
      pricing,
      historyDir: dir,
      journal: true,
      logger: false,
    });

    await expectBatchStoppedByCap(report, dir, {
      tasks: 50,
      cap: CAP,
      concurrency: CONCURRENCY,
      callsMade: models.reduce((n, m) => n + m.requests.length, 0),
      costPerCall: CALL,
    });
  }, 60_000);

  it('under a strict shared cap, no call whose worst case would pass the cap is made: spend ends within the cap', async () => {
    const models: ScriptedChatModel[] = [];
    const tasks = Array.from({ length: 50 }, (_, i) => {
      // Reported input stays below the request's bound (its serialized size), as a provider's count does.
      const llm = new ScriptedChatModel(
        [
          { calls: [{ id: `c${i}`, name: 'echo', args: { text: `t${i}` } }], inputTokens: 200, outputTokens: 100 },
          { text: `done ${i}`, inputTokens: 200, outputTokens: 100 },
        ],
        { maxTokens: 100 },
      );
      models.push(llm);
      const input = `task ${i}`;
      return { id: `task-${String(i).padStart(2, '0')}`, input, drive: agentRun(observe, llm, input) };
    });
    const report = await runBatch(tasks, {
      concurrency: CONCURRENCY,
      total: { maxCostUsd: CAP, strict: true },
      pricing,
      historyDir: dir,
      journal: true,
      logger: false,
    });
    await expectStrictBatchWithinCap(report, dir, {
      cap: CAP,
      callsMade: models.reduce((n, m) => n + m.requests.length, 0),
      costPerCall: 0.0006,
    });
  }, 60_000);

  it('under a strict cap, a chat model that states no max tokens is refused before its first call, saying so', async () => {
    const llm = new ScriptedChatModel([{ text: 'done' }]);
    const report = await runBatch([{ id: 'unbounded', input: 'hi', drive: agentRun(observe, llm, 'hi') }], {
      total: { maxCostUsd: CAP, strict: true },
      pricing,
      logger: false,
    });
    expect(llm.requests).toHaveLength(0);
    expect(report.runs[0]!.outcome).toBe('error');
    expect(String(report.runs[0]!.error)).toMatch(/states no max output tokens.*set maxTokens/);
  });
});
