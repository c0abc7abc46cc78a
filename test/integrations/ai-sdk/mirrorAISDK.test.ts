import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { generateText, streamText, tool, ToolLoopAgent, type ModelMessage } from 'ai';
import { z } from 'zod';
import { Budget, BudgetExceededError, type Pricing, type StepMirror } from 'agent-state-machine';
import { historyToOtlp } from 'agent-state-machine/report';
import { loadHistory, validateHistory } from 'agent-state-machine/history';
import { mirrorAISDK } from '../../../lib/integrations/ai-sdk';
import { apiError, call, checkPrompt, scriptedModel, text, type Step } from './scriptedModel';
import { TOOL_ROUND_TRIP } from '../../helpers/frameworkRuns';

/** $0.02 a step: 1,000 input tokens at $10/M plus 500 output at $20/M. */
const pricing: Pricing = (usage) => ((usage.inputTokens ?? 0) * 10 + (usage.outputTokens ?? 0) * 20) / 1e6;
const priced = (content: Extract<Step, { content: unknown }>['content']): Step => ({
  content,
  usage: { input: 1000, output: 500 },
});
const ping = (log: string[] = []) =>
  tool({ inputSchema: z.object({}), execute: async (_input, { toolCallId }) => (log.push(toolCallId), 'pong') });

let dir: string;
beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-mirror-aisdk-'))));
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** The path of the moves, `A→B`, forced ones marked. */
const moves = (mirror: StepMirror): string[] =>
  mirror.machine.history().map((r) => `${r.to}${r.forced === true ? '!' : ''}`);

/** Reads a history file back and checks it: valid, ended, no rejected move. */
async function checkFile(file: string) {
  const history = await loadHistory(file);
  const verdict = validateHistory(history.entries);
  expect(verdict.issues).toEqual([]);
  expect(verdict.interrupted).toBeUndefined();
  expect(history.rejected).toHaveLength(0);
  return history;
}

describe('mirrorAISDK', () => {
  it('mirrors a generateText tool round trip into a history file with its journal', async () => {
    const file = path.join(dir, 'run.jsonl');
    const model = scriptedModel([priced([text('looking'), call('c1', 'ping', {})]), priced([text('done')])]);
    const m = mirrorAISDK({ model, tools: { ping: ping() }, pricing, historyFile: file, journal: true, logger: false });
    const result = await generateText({ ...m.settings, prompt: 'ping it' });
    m.close();
    expect(result.text).toBe('done');
    expect(m.result).toMatchObject({ outcome: 'end_of_turn', text: 'done', texts: ['looking'] });
    expect(moves(m.mirror)).toEqual(TOOL_ROUND_TRIP);
    expect(m.mirror.usage).toMatchObject({ llmCalls: 2, toolCalls: 1, costUsd: 0.04, inputTokens: 2000 });
    const history = await checkFile(file);
    // The ledger's write-ahead line before each model call, as the adapter's journal has it.
    expect(history.journal.map((j) => j.type)).toEqual(['reserve', 'llm', 'tool', 'reserve', 'llm']);
    expect(history.journal[1]).toMatchObject({
      operation: 'sendUserMessage',
      input: { kind: 'user_message', message: 'ping it' },
      costUsd: 0.02,
      response: { toolCalls: [{ id: 'c1', name: 'ping', input: {} }], model: 'mock-model-2026-01-01' },
    });
    expect(history.journal[2]).toMatchObject({ status: 'ok', result: { callId: 'c1', output: 'pong' } });
    // The OTLP export reads it as it reads an adapter's file: one turn, its two model calls.
    const spans = historyToOtlp([...history.entries]).resourceSpans.flatMap((r) =>
      r.scopeSpans.flatMap((s) => s.spans),
    );
    expect(spans.filter((s) => s.name.startsWith('chat')).map((s) => s.name)).toEqual([
      'chat mock-model-2026-01-01',
      'chat mock-model-2026-01-01',
    ]);
    expect(spans.filter((s) => s.name.startsWith('invoke_agent'))).toHaveLength(1);
  });

  it('a spent budget refuses the tool call and stops the loop the SDK way, every call answered', async () => {
    const model = scriptedModel([priced([call('c1', 'ping', {})]), priced([text('never')])]);
    const log: string[] = [];
    const m = mirrorAISDK({
      model,
      tools: { ping: ping(log) },
      pricing,
      budget: { maxCostUsd: 0.02, strict: false },
      logger: false,
    });
    const result = await generateText({ ...m.settings, prompt: 'go' });
    expect(log).toEqual([]);
    expect(model.prompts).toHaveLength(1);
    expect(m.result).toMatchObject({ outcome: 'budget_exceeded' });
    expect(m.result!.error).toBeInstanceOf(BudgetExceededError);
    expect(moves(m.mirror).slice(-4)).toEqual([
      'RunningTool',
      'CheckingGitCommits',
      'CheckingBudget',
      'BudgetExceeded',
    ]);
    expect(validateHistory(m.mirror.machine.history()).ok).toBe(true);
    // The conversation goes on: the refused call is answered, and the provider accepts it.
    const conversation: ModelMessage[] = [{ role: 'user', content: 'go' }, ...result.response.messages];
    expect(m.messages).toEqual(result.response.messages);
    const next = scriptedModel([priced([text('ok')])]);
    await generateText({ model: next, messages: conversation });
    expect(next.prompts).toHaveLength(1);
  });

  it('a model call a spent budget forbids is never made: generateText rejects with BudgetExceededError', async () => {
    const shared = new Budget({ maxLlmCalls: 1 });
    const first = mirrorAISDK({
      model: scriptedModel([priced([text('one')])]),
      sharedBudgets: [shared],
      logger: false,
    });
    await generateText({ ...first.settings, prompt: 'a' });
    const model = scriptedModel([priced([text('two')])]);
    const second = mirrorAISDK({ model, sharedBudgets: [shared], logger: false });
    await expect(generateText({ ...second.settings, prompt: 'b' })).rejects.toBeInstanceOf(BudgetExceededError);
    expect(model.prompts).toHaveLength(0);
    expect(second.result).toMatchObject({ outcome: 'budget_exceeded' });
    expect(moves(second.mirror)).toEqual(['WaitingForUserInput', 'Error']);
  });

  it('stops before the model call after tools once the budget is spent: CheckingBudget → BudgetExceeded', async () => {
    const model = scriptedModel([priced([call('c1', 'ping', {})]), priced([text('never')])]);
    const m = mirrorAISDK({ model, tools: { ping: ping() }, pricing, budget: { maxToolCalls: 1 }, logger: false });
    const result = await generateText({ ...m.settings, prompt: 'go' });
    expect(model.prompts).toHaveLength(1);
    expect(result.toolResults).toHaveLength(1);
    expect(m.result).toMatchObject({ outcome: 'budget_exceeded', usage: { toolCalls: 1, llmCalls: 1 } });
    expect(m.mirror.machine.current).toBe('BudgetExceeded');
  });

  it('a cancel mid-tool ends in Cancelled (forced, with the reason), and the messages answer the call', async () => {
    const model = scriptedModel([priced([text('working'), call('c1', 'slow', {})]), priced([text('never')])]);
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const slow = tool({
      inputSchema: z.object({}),
      execute: (_input, { abortSignal }) =>
        new Promise<string>((_resolve, reject) => {
          started();
          abortSignal?.addEventListener('abort', () => reject(new Error('stopped')), { once: true });
        }),
    });
    const m = mirrorAISDK({ model, tools: { slow }, logger: false });
    const run = generateText({ ...m.settings, prompt: 'go' }).catch((error: unknown) => error);
    await running;
    m.cancel('user pressed stop');
    await run;
    expect(model.prompts).toHaveLength(1);
    expect(m.result).toMatchObject({ outcome: 'cancelled' });
    const last = m.mirror.machine.history().at(-1)!;
    expect(last).toMatchObject({ from: 'RunningTool', to: 'Cancelled', forced: true });
    expect(last.description).toContain('user pressed stop');
    expect(validateHistory(m.mirror.machine.history()).ok).toBe(true);
    const conversation = [{ role: 'user', content: 'go' }, ...m.messages] as Parameters<typeof checkPrompt>[0];
    expect(() => checkPrompt(conversation)).not.toThrow();
    expect(m.messages.at(-1)).toMatchObject({
      role: 'tool',
      content: [{ toolCallId: 'c1', output: { type: 'error-text' } }],
    });
  });

  it('records each attempt the SDK retried itself', async () => {
    const model = scriptedModel([{ error: apiError(429, { 'retry-after-ms': '0' }) }, priced([text('fine')])]);
    const file = path.join(dir, 'retry.jsonl');
    const m = mirrorAISDK({ model, historyFile: file, journal: true, logger: false });
    const result = await generateText({ ...m.settings, prompt: 'go' });
    m.close();
    expect(result.text).toBe('fine');
    const response = m.mirror.machine.history().find((r) => r.to === 'ProcessingLLMResponse')!;
    expect(response.data).toMatchObject({ attempts: 2, failures: [{ attempt: 1, error: '429 Rate limit reached' }] });
    expect(m.mirror.usage.llmCalls).toBe(2);
    const history = await checkFile(file);
    expect(history.journal.filter((j) => j.type === 'llm').map((j) => (j as { attempt?: number }).attempt)).toEqual([
      1, 2,
    ]);
    expect(history.journal.filter((j) => j.type === 'reserve')).toHaveLength(2);
  });

  it('a model error the SDK gives up on ends the run in Error, with its attempts', async () => {
    const model = scriptedModel([{ error: apiError(400, {}, false) }]);
    const m = mirrorAISDK({ model, logger: false });
    await expect(generateText({ ...m.settings, prompt: 'go' })).rejects.toThrow();
    expect(m.result).toMatchObject({ outcome: 'error' });
    expect(moves(m.mirror)).toEqual(['WaitingForUserInput', 'SendingToLLM', 'Error']);
  });

  it('mirrors streamText: tools wait for the streamed response, so the moves keep the table order', async () => {
    const model = scriptedModel([priced([text('looking'), call('c1', 'ping', {})]), priced([text('done')])]);
    const m = mirrorAISDK({ model, tools: { ping: ping() }, pricing, logger: false });
    const result = streamText({ ...m.settings, prompt: 'go' });
    expect(await result.text).toBe('done');
    expect(moves(m.mirror)).toEqual(TOOL_ROUND_TRIP);
    expect(m.mirror.usage).toMatchObject({ costUsd: 0.04, llmCalls: 2, toolCalls: 1 });
  });

  it('mirrors a ToolLoopAgent, one run per generate call', async () => {
    const model = scriptedModel([priced([call('c1', 'ping', {})]), priced([text('one')]), priced([text('two')])]);
    const m = mirrorAISDK({ model, tools: { ping: ping() }, pricing, logger: false });
    const agent = new ToolLoopAgent({ ...m.settings });
    expect((await agent.generate({ prompt: 'first', abortSignal: m.signal })).text).toBe('one');
    expect((await agent.generate({ prompt: 'second', abortSignal: m.signal })).text).toBe('two');
    expect(m.mirror.turn).toBe(2);
    expect(m.result).toMatchObject({ outcome: 'end_of_turn', turn: 2, text: 'two' });
    expect(validateHistory(m.mirror.machine.history()).ok).toBe(true);
  });

  it('refuses what is not a model object or options', () => {
    expect(() => mirrorAISDK({ model: 'openai/gpt-4.1' })).toThrow(/language model object/);
    expect(() => mirrorAISDK({ maxSteps: 0 })).toThrow(/maxSteps/);
  });
});
