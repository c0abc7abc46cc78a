// A LangGraph run of a batch cut off, resumed, and cut again before the new attempt wrote its
// first record: the new file holds no spend, the kept attempt (`<file>.interrupted`) holds the
// journal and what it cost. The next resume serves that journal and counts its spend: the
// served calls count toward `perRun.maxLlmCalls` and the total, as if the run had never been cut.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { tool } from '@langchain/core/tools';
import { createReactAgent } from '@langchain/langgraph/prebuilt';
import { z } from 'zod';
import { runBatch } from 'agent-state-machine';
import { LangGraphMirror } from '../../../lib/integrations/langgraph';
import { ScriptedChatModel, type ScriptedStep } from './scriptedChatModel';

const look = tool(async () => 'seen', { name: 'look', description: 'Looks', schema: z.object({}) });
// $0.01 a call: two tool calls, then the answer (which `perRun.maxLlmCalls: 2` refuses).
const pricing = (): number => 0.01;
const STEPS: ScriptedStep[] = [
  { calls: [{ id: 'c1', name: 'look' }], inputTokens: 10, outputTokens: 5 },
  { calls: [{ id: 'c2', name: 'look' }], inputTokens: 10, outputTokens: 5 },
  { text: 'done', inputTokens: 10, outputTokens: 5 },
];

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'asm-lg-cut-twice-'));
  // LangChain logs each error a raising handler throws (a refused call) with console.error.
  jest.spyOn(console, 'error').mockImplementation(() => undefined);
});
afterEach(() => {
  jest.restoreAllMocks();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function batch(model: ScriptedChatModel, resume: boolean) {
  const task = {
    id: 'a',
    input: 'look twice',
    drive: (mirror: LangGraphMirror['mirror']) => {
      const lg = new LangGraphMirror({ mirror });
      const agent = createReactAgent({ llm: lg.wrapModel(model), tools: lg.wrapTools([look]) });
      return lg.run(agent, { messages: [{ role: 'user', content: 'look twice' }] });
    },
  };
  return runBatch([task], {
    historyDir: dir,
    journal: true,
    pricing,
    perRun: { maxLlmCalls: 2 },
    total: { maxCostUsd: 1, strict: false },
    logger: false,
    resume,
  });
}

describe('a framework run resumed after its new attempt was cut before its first record', () => {
  it('counts the kept attempt’s spend: the served calls count toward perRun, no call is made again', async () => {
    const first = await batch(new ScriptedChatModel(STEPS), false);
    expect(first.runs[0]).toMatchObject({ outcome: 'budget_exceeded', usage: { llmCalls: 2 } });
    // Cut as a kill after the second response leaves it: everything after its journal line goes.
    const file = path.join(dir, 'a.jsonl');
    const lines = fs.readFileSync(file, 'utf8').split('\n');
    const llm = lines.flatMap((l, i) => (l.startsWith('{"type":"llm"') ? [i] : []));
    expect(llm).toHaveLength(2);
    fs.writeFileSync(file, `${lines.slice(0, llm[1]! + 1).join('\n')}\n`);
    // A resume set it aside and was killed before its new attempt's first record: only the meta line.
    fs.renameSync(file, `${file}.interrupted`);
    fs.writeFileSync(file, `${lines[0]}\n`);

    const model = new ScriptedChatModel(STEPS.slice(2));
    const report = await batch(model, true);
    // Both calls served from the kept journal, none made again, and the third refused by perRun.
    expect(model.requests).toHaveLength(0);
    expect(report.runs[0]).toMatchObject({ outcome: 'budget_exceeded', resumed: 'recovered', usage: { llmCalls: 2 } });
    expect(report.totals.costUsd).toBeCloseTo(0.02, 10);
  });
});
