import { Agent, RunState, setTracingDisabled, tool } from '@openai/agents';
import { z } from 'zod';
import { BudgetExceededError } from 'agent-state-machine';
import { validateHistory } from 'agent-state-machine/history';
import { agentsMirror, runStateOf } from '../../../lib/integrations/openai-agents';
import { requestBound } from '../../../lib/integrations/openai-agents/requestBound';
import { requestTokenBound } from '../../../lib/internal/requestTokenBound';
import { cannedModel } from './cannedModel';

setTracingDisabled(true);

const echo = tool({
  name: 'echo',
  description: 'Echoes its text',
  parameters: z.object({ text: z.string() }),
  execute: async ({ text }) => `echo: ${text}`,
});

// Output alone is priced, $0.0001 a token: maxTokens 100 holds $0.01; a reply of 60 tokens costs $0.006.
const pricing = (u: { outputTokens?: number }): number => (u.outputTokens ?? 0) * 1e-4;

describe('AgentsMirror under a strict maxCostUsd', () => {
  it('.run() is stopped before the call whose worst case would pass the cap; the model never gets it, and the RunState resumes', async () => {
    const model = cannedModel([
      { calls: [{ id: 'c1', name: 'echo', args: { text: 'hi' } }], outputTokens: 60 },
      { text: 'done', outputTokens: 60 },
    ]);
    const agent = new Agent({ name: 'helper', model, tools: [echo], modelSettings: { maxTokens: 100 } });
    const sm = agentsMirror({ logger: false, pricing, budget: { maxCostUsd: 0.015, strict: true } });
    const error = await sm.run(agent, 'say hi').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(BudgetExceededError);
    expect(model.requests).toHaveLength(1);
    expect(sm.mirror.usage.costUsd).toBeCloseTo(0.006, 12);
    expect(sm.result).toMatchObject({ outcome: 'budget_exceeded' });
    const last = sm.machine.history().at(-1)!;
    expect(last.data).toMatchObject({ limit: 'maxCostUsd', max: 0.015, hold: 0.01 });
    expect(validateHistory(sm.machine.history()).issues).toEqual([]);
    const state = runStateOf(error);
    expect(state).toBeInstanceOf(RunState);
    const again = agentsMirror({ logger: false, pricing, budget: { maxCostUsd: 0.05, strict: true } });
    const result = await again.run(agent, await RunState.fromString(agent, state!.toString()));
    expect(result.finalOutput).toBe('done');
    expect(model.requests).toHaveLength(2);
  });

  it('without modelSettings.maxTokens a strict cap refuses the first call, naming the setting', async () => {
    const model = cannedModel([{ text: 'done' }]);
    const agent = new Agent({ name: 'helper', model });
    const sm = agentsMirror({ logger: false, pricing, budget: { maxCostUsd: 1, strict: true } });
    await expect(sm.run(agent, 'hi')).rejects.toThrow(/sets no maxTokens.*modelSettings/);
    expect(model.requests).toHaveLength(0);
    expect(sm.result?.outcome).toBe('error');
  });

  it('bounds a request by its instructions, input, tools and handoffs, and says why a server-kept input has none', () => {
    const request = {
      systemInstructions: 'Be brief.',
      input: [{ role: 'user', content: 'hi' }],
      modelSettings: { maxTokens: 50 },
      tools: [{ type: 'function', name: 'echo', description: 'Echoes', parameters: {}, strict: true }],
      handoffs: [],
      outputType: 'text',
      tracing: false,
    } as never as Parameters<typeof requestBound>[0];
    const { systemInstructions, input, tools, handoffs, outputType } = request;
    expect(requestBound(request, 'gpt-x')).toEqual({
      inputTokens: requestTokenBound({ systemInstructions, input, tools, handoffs, outputType }, 2, 1),
      maxOutputTokens: 50,
      model: 'gpt-x',
    });
    expect(requestBound({ ...request, previousResponseId: 'resp_1' }, 'gpt-x')).toMatch(/kept by the server/);
    expect(requestBound({ ...request, modelSettings: {} }, undefined)).toMatch(/sets no maxTokens/);
  });
});
