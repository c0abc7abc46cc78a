// AI SDK 7 only: run by the ai7-openai7 jest project (Node 22+), type-checked by tsconfig.v7.json.
// The tests of budgetFor.test.ts run against AI SDK 7 too; these cover what only 7 has.
import {
  generateText,
  isStepCount,
  streamText,
  tool,
  ToolLoopAgent,
  type ModelMessage,
  type StepResult,
  type ToolSet,
} from 'ai';
import { z } from 'zod';
import { Budget, type Pricing } from 'agent-state-machine';
import { budgetFor } from '../../../lib/integrations/ai-sdk';
import { call, text, type Step } from './scriptedModel';
import { scriptedModelV4 } from './scriptedModel.v7';

/** $0.02 a step: 1,000 input tokens at $10/M plus 500 output at $20/M. */
const pricing: Pricing = (usage) => ((usage.inputTokens ?? 0) * 10 + (usage.outputTokens ?? 0) * 20) / 1e6;
const priced = (content: Extract<Step, { content: unknown }>['content']): Step => ({
  content,
  usage: { input: 1000, output: 500 },
});
/** A model that asks for one more ping every step (within `n` steps). */
const endless = (n: number) =>
  scriptedModelV4(Array.from({ length: n }, (_, i) => priced([call(`c${i}`, 'ping', {})])));
const ping = (log: string[] = []) =>
  tool({ inputSchema: z.object({}), execute: async (_input, { toolCallId }) => (log.push(toolCallId), 'pong') });

describe('budgetFor on AI SDK 7', () => {
  it('.onStepEnd charges each step once under isStepCount; result.usage, summed over all steps, is what was charged', async () => {
    const budget = new Budget({ maxCostUsd: 0.05 });
    const guard = budgetFor(budget, { pricing });
    const { prepareStep, stopWhen, onStepEnd, abortSignal } = guard;
    const result = await generateText({
      model: endless(10),
      tools: guard.wrapTools({ ping: ping() }),
      prompt: 'go',
      maxRetries: 0,
      prepareStep,
      stopWhen: [isStepCount(20), stopWhen],
      onStepEnd,
      abortSignal,
    });
    expect(result.steps).toHaveLength(3);
    expect(budget.usage).toMatchObject({
      costUsd: 0.06,
      llmCalls: 3,
      toolCalls: 3,
      inputTokens: 3000,
      outputTokens: 1500,
    });
    // In AI SDK 7 a result's usage is the sum over its steps (6's totalUsage); finalStep.usage is one step's.
    expect(result.usage).toMatchObject({ inputTokens: 3000, outputTokens: 1500 });
    expect(result.finalStep.usage).toMatchObject({ inputTokens: 1000, outputTokens: 500 });
    expect(guard.usage).toMatchObject({
      inputTokens: result.usage.inputTokens,
      outputTokens: result.usage.outputTokens,
    });
    expect(guard.stopped?.limit).toBe('maxCostUsd');
  });

  it('spread with your own onStepEnd calling guard.onStepEnd: the last step, seen by no stopWhen, is charged once', async () => {
    const budget = new Budget({});
    const guard = budgetFor(budget, { pricing });
    const seen: number[] = [];
    const model = scriptedModelV4([priced([call('a', 'ping', {})]), priced([text('done')])]);
    const onStepEnd = (step: StepResult<ToolSet>) => {
      seen.push(step.stepNumber);
      guard.onStepEnd(step);
    };
    // The spread passes onStepFinish too; AI SDK 7 calls only onStepEnd when both are given.
    const result = await generateText({
      model,
      tools: { ping: ping() },
      prompt: 'go',
      maxRetries: 0,
      ...guard,
      onStepEnd,
      stopWhen: [isStepCount(5), guard.stopWhen],
    });
    expect(result.steps).toHaveLength(2);
    expect(seen).toEqual([0, 1]);
    expect(budget.usage).toMatchObject({ llmCalls: 2, toolCalls: 1, inputTokens: 2000, costUsd: 0.04 });
  });

  it('charges a streamText loop and a ToolLoopAgent step by step through onStepEnd', async () => {
    // $0.02 a step: spent after the second.
    const streamed = new Budget({ maxCostUsd: 0.03 });
    const a = budgetFor(streamed, { pricing });
    const stream = streamText({
      model: endless(5),
      tools: a.wrapTools({ ping: ping() }),
      prompt: 'go',
      maxRetries: 0,
      prepareStep: a.prepareStep,
      onStepEnd: a.onStepEnd,
      stopWhen: [isStepCount(20), a.stopWhen],
      onError: () => {},
    });
    await stream.consumeStream();
    expect(await stream.steps).toHaveLength(2);
    expect(streamed.usage).toMatchObject({ costUsd: 0.04, llmCalls: 2, toolCalls: 2, inputTokens: 2000 });

    const agentBudget = new Budget({ maxCostUsd: 0.03 });
    const b = budgetFor(agentBudget, { pricing });
    const agent = new ToolLoopAgent({
      model: endless(5),
      tools: b.wrapTools({ ping: ping() }),
      maxRetries: 0,
      prepareStep: b.prepareStep,
      onStepEnd: b.onStepEnd,
      stopWhen: [isStepCount(20), b.stopWhen],
    });
    const result = await agent.generate({ prompt: 'go', abortSignal: b.abortSignal });
    expect(result.steps).toHaveLength(2);
    expect(agentBudget.usage).toMatchObject({ costUsd: 0.04, llmCalls: 2, toolCalls: 2 });
    expect(b.stopped?.limit).toBe('maxCostUsd');
  });

  describe('toolApproval', () => {
    /** One step asking for ping and pong, then a text step. */
    const twoCalls = () =>
      scriptedModelV4([priced([call('a', 'ping', {}), call('b', 'pong', {})]), priced([text('ok')])]);

    it.each([
      ['approved', ['a', 'b'], 2],
      ['denied', ['b'], 1],
    ] as const)(
      'a call %s by toolApproval in the step: only calls that ran are counted',
      async (status, ran, toolCalls) => {
        const log: string[] = [];
        const budget = new Budget({});
        const guard = budgetFor(budget);
        const result = await generateText({
          model: twoCalls(),
          tools: { ping: ping(log), pong: ping(log) },
          toolApproval: { ping: status },
          prompt: 'go',
          maxRetries: 0,
          ...guard,
          stopWhen: [isStepCount(5), guard.stopWhen],
        });
        expect(log.sort()).toEqual(ran);
        expect(result.steps).toHaveLength(2);
        expect(budget.usage).toMatchObject({ llmCalls: 2, toolCalls });
      },
    );

    /** A first loop that stops for the user's approval of ping, and the messages answering it. */
    async function askApproval(approved: boolean, limits: ConstructorParameters<typeof Budget>[0] = {}) {
      const model = twoCalls();
      const budget = new Budget(limits);
      const first = budgetFor(budget);
      const log: string[] = [];
      const tools = { ping: ping(log), pong: ping(log) };
      const stopped = await generateText({
        model,
        tools: first.wrapTools(tools),
        toolApproval: { ping: 'user-approval' },
        prompt: 'go',
        maxRetries: 0,
        ...first,
        stopWhen: [isStepCount(5), first.stopWhen],
      });
      const request = stopped.finalStep.content.find((p) => p.type === 'tool-approval-request');
      if (request?.type !== 'tool-approval-request') throw new Error('no approval request');
      const messages: ModelMessage[] = [
        { role: 'user', content: 'go' },
        ...stopped.responseMessages,
        { role: 'tool', content: [{ type: 'tool-approval-response', approvalId: request.approvalId, approved }] },
      ];
      return { model, budget, log, tools, stopped, messages };
    }

    it('a call waiting for user-approval is not counted; once approved, it runs before the first step and is counted once', async () => {
      for (const wrapped of [false, true]) {
        const { model, budget, log, tools, stopped, messages } = await askApproval(true);
        expect(stopped.steps).toHaveLength(1);
        expect(log).toEqual(['b']);
        expect(budget.usage).toMatchObject({ llmCalls: 1, toolCalls: 1 });
        // The run that carries the approval, wrapped or not: the call is counted when it runs, outside any step.
        const guard = budgetFor(budget);
        const result = await generateText({
          model,
          tools: wrapped ? guard.wrapTools(tools) : tools,
          toolApproval: { ping: 'user-approval' },
          messages,
          maxRetries: 0,
          ...guard,
          stopWhen: [isStepCount(5), guard.stopWhen],
        });
        expect(log).toEqual(['b', 'a']);
        expect(result.text).toBe('ok');
        expect(budget.usage).toMatchObject({ llmCalls: 2, toolCalls: 2 });
        expect(guard.usage).toMatchObject({ llmCalls: 1, toolCalls: 1 });
      }
    });

    it('a call the user denied never runs and is not counted', async () => {
      const { model, budget, log, tools, messages } = await askApproval(false);
      const guard = budgetFor(budget);
      const result = await generateText({
        model,
        tools,
        toolApproval: { ping: 'user-approval' },
        messages,
        maxRetries: 0,
        ...guard,
        stopWhen: [isStepCount(5), guard.stopWhen],
      });
      expect(result.text).toBe('ok');
      expect(log).toEqual(['b']);
      expect(guard.usage).toMatchObject({ llmCalls: 1, toolCalls: 0 });
    });

    it('.wrapTools() refuses an approved call once maxToolCalls is spent', async () => {
      const { model, budget, log, tools, messages } = await askApproval(true, { maxToolCalls: 2 });
      // pong ran in the first loop; one more tool call elsewhere spends the budget.
      budget.charge({ toolCalls: 1 });
      const guard = budgetFor(budget);
      const result = await generateText({
        model,
        tools: guard.wrapTools(tools),
        toolApproval: { ping: 'user-approval' },
        messages,
        maxRetries: 0,
        ...guard,
        stopWhen: [isStepCount(5), guard.stopWhen],
      }).catch((e: unknown) => e);
      expect(log).toEqual(['b']);
      expect(budget.usage.toolCalls).toBe(2);
      // Spent before the first step: the loop makes no LLM call.
      expect(result).toMatchObject({ name: 'BudgetExceededError', limit: 'maxToolCalls' });
      expect(model.prompts).toHaveLength(1);
    });
  });
});
