// fromAISDK resumed from the journal of a run cut off after its second step: the recorded
// steps rebuild its conversation through acceptRecorded with no model call, and the one step
// asked for next gets a valid prompt, the same as the uninterrupted run's third.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { tool } from 'ai';
import { z } from 'zod';
import { AgentWithStateMachine } from 'agent-state-machine';
import { JsonlHistorySink } from 'agent-state-machine/history';
import { resumeAgent } from 'agent-state-machine/replay';
import { fromAISDK } from '../../../lib/integrations/ai-sdk';
import { call, scriptedModel, text, type Step } from './scriptedModel';

let dir: string;
beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-resume-aisdk-'))));
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const tools = () => ({
  read_file: tool({
    description: 'Reads a file',
    inputSchema: z.object({ path: z.string() }),
    execute: async ({ path: p }) => `contents of ${p}`,
  }),
});

const STEPS: Step[] = [
  { content: [call('c1', 'read_file', { path: 'a.txt' })] },
  { content: [text('now b'), call('c2', 'read_file', { path: 'b.txt' })] },
  { content: [text('both read')] },
];

describe('fromAISDK resumed from a journal', () => {
  it.each(['rerun', 'serve'] as const)('continues with a valid prompt (policy %s)', async (policy) => {
    const whole = path.join(dir, 'whole.jsonl');
    const sink = JsonlHistorySink.open(whole, { runId: 'r' });
    const model = scriptedModel(STEPS);
    const first = new AgentWithStateMachine(fromAISDK({ model, tools: tools() }), {
      sink,
      journal: true,
      logger: false,
    });
    expect((await first.runTurn('Read a.txt and b.txt')).outcome).toBe('end_of_turn');
    sink.close();

    const lines = fs.readFileSync(whole, 'utf8').split('\n');
    const second = lines.findIndex((l) => l.includes('"type":"llm"') && l.includes('"sendToolResults"'));
    const cut = path.join(dir, 'cut.jsonl');
    fs.writeFileSync(cut, `${lines.slice(0, second + 1).join('\n')}\n`);

    // Only the step the file had no answer to is scripted: a request for any other fails.
    const resumedModel = scriptedModel(STEPS.slice(2));
    const { results, resumed } = await resumeAgent(cut, fromAISDK({ model: resumedModel, tools: tools() }), {
      logger: false,
      resumeTools: { default: 'serve', ...(policy === 'rerun' ? { rerun: ['read_file'] } : {}) },
    });
    expect(results.map((r) => [r.outcome, r.text, r.error?.message])).toEqual([
      ['end_of_turn', 'both read', undefined],
    ]);
    expect(resumed).toMatchObject({ mode: 'recovered', recordedCalls: 2 });
    expect(resumedModel.prompts).toHaveLength(1);
    if (policy === 'rerun') expect(resumedModel.prompts[0]).toEqual(model.prompts[2]);
    else expect(JSON.stringify(resumedModel.prompts[0])).toContain('interrupted: the run was cut off');
  });
});
