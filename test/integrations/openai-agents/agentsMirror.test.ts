import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  Agent,
  handoff,
  MaxTurnsExceededError,
  MemorySession,
  RunState,
  setTracingDisabled,
  tool,
} from '@openai/agents';
import { z } from 'zod';
import {
  BudgetExceededError,
  TurnCancelledError,
  TurnInProgressError,
  type StateMachine,
  type StateName,
} from 'agent-state-machine';
import { JsonlHistorySink, loadHistory, validateHistory } from 'agent-state-machine/history';
import { agentsMirror, runStateOf, type AgentsMirror } from '../../../lib/integrations/openai-agents';
import { cannedModel } from './cannedModel';
import { TOOL_ROUND_TRIP } from '../../helpers/frameworkRuns';

setTracingDisabled(true);

const echo = tool({
  name: 'echo',
  description: 'Echoes its text',
  parameters: z.object({ text: z.string() }),
  execute: async ({ text }) => `echo: ${text}`,
});

/** A clock that moves 1 ms a reading, so histories are the same on every run. */
function stepClock(): () => number {
  let t = Date.UTC(2026, 0, 1);
  return () => (t += 1);
}

function mirror(options: Parameters<typeof agentsMirror>[0] = {}): AgentsMirror {
  return agentsMirror({ logger: false, clock: stepClock(), ...options });
}

const states = (m: StateMachine<StateName>): string[] => m.history().map((r) => r.to);

function expectLegal(sm: AgentsMirror): void {
  const records = sm.machine.history();
  const verdict = validateHistory(records);
  expect(verdict.issues).toEqual([]);
  expect(records.filter((r) => r.forced)).toEqual([]);
}

describe('AgentsMirror', () => {
  it('.run() mirrors a tool round trip as the moves of one turn, legal and unforced', async () => {
    const model = cannedModel([{ calls: [{ id: 'c1', name: 'echo', args: { text: 'hi' } }] }, { text: 'done' }]);
    const agent = new Agent({ name: 'helper', model, tools: [echo] });
    const sm = mirror();
    const result = await sm.run(agent, 'say hi');
    expect(result.finalOutput).toBe('done');
    expect(sm.result).toMatchObject({ outcome: 'end_of_turn', text: 'done' });
    expect(sm.usage).toMatchObject({ llmCalls: 2, toolCalls: 1, inputTokens: 200, outputTokens: 20 });
    expect(states(sm.machine)).toEqual(TOOL_ROUND_TRIP);
    expectLegal(sm);
    // The agent the user built is left as it was.
    expect(agent.model).toBe(model);
  });

  it('.run() stops before the model call once maxToolCalls is spent, and the kept RunState resumes without repeating a call', async () => {
    const model = cannedModel([{ calls: [{ id: 'c1', name: 'echo', args: { text: 'hi' } }] }, { text: 'done' }]);
    const agent = new Agent({ name: 'helper', model, tools: [echo] });
    const sm = mirror({ budget: { maxToolCalls: 1 } });
    const error = await sm.run(agent, 'say hi').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(BudgetExceededError);
    expect(model.requests).toHaveLength(1);
    expect(sm.result).toMatchObject({ outcome: 'budget_exceeded' });
    expect(sm.machine.current).toBe('BudgetExceeded');
    expectLegal(sm);
    const state = runStateOf(error);
    expect(state).toBeInstanceOf(RunState);

    // Resume, serialized and read back as a user would, under a mirror with room.
    const restored = await RunState.fromString(agent, state!.toString());
    const again = mirror({ budget: { maxToolCalls: 5 } });
    const result = await again.run(agent, restored);
    expect(result.finalOutput).toBe('done');
    expect(model.requests).toHaveLength(2);
    expect(model.left).toBe(0);
    // The tool ran once, before the stop; the resumed call carried its result.
    expect(JSON.stringify(model.requests[1]!.input)).toContain('echo: hi');
    expect(again.result).toMatchObject({ outcome: 'end_of_turn' });
    expectLegal(again);
  });

  it('.run() stops before a tool call once a response spent maxTokens; the tool never runs and the state resumes', async () => {
    let runs = 0;
    const counted = tool({
      name: 'count',
      description: 'Counts',
      parameters: z.object({}),
      execute: async () => `run ${++runs}`,
    });
    const model = cannedModel([
      { calls: [{ id: 'c1', name: 'count' }], inputTokens: 100, outputTokens: 10 },
      { calls: [{ id: 'c2', name: 'count' }], inputTokens: 100, outputTokens: 10 },
      { text: 'done' },
    ]);
    const agent = new Agent({ name: 'helper', model, tools: [counted] });
    const sm = mirror({ budget: { maxTokens: 150 } });
    const error = await sm.run(agent, 'count twice').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(BudgetExceededError);
    expect(runs).toBe(1);
    expect(model.requests).toHaveLength(2);
    expect(sm.result).toMatchObject({ outcome: 'budget_exceeded' });
    expect(sm.machine.current).toBe('BudgetExceeded');
    const tools = sm.machine.history().filter((r) => r.to === 'CheckingGitCommits');
    expect(tools.at(-1)?.data).toMatchObject({
      results: [{ callId: 'c2', isError: true, note: expect.stringMatching(/^not run: budget exceeded/) }],
    });
    expectLegal(sm);

    const again = mirror();
    const result = await again.run(agent, runStateOf(error)!);
    expect(result.finalOutput).toBe('done');
    // The refused call is answered (the SDK's "aborted"), never run on resume.
    expect(runs).toBe(1);
    expectLegal(again);
  });

  it('.cancel() during a tool ends the run cancelled; the tool gets the abort and the history stays legal', async () => {
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const slow = tool({
      name: 'slow',
      description: 'Waits until aborted',
      parameters: z.object({}),
      execute: (_input, _ctx, details) =>
        new Promise<string>((_resolve, reject) => {
          started();
          details?.signal?.addEventListener('abort', () => reject(details.signal!.reason as Error), { once: true });
        }),
    });
    const model = cannedModel([{ calls: [{ id: 'c1', name: 'slow' }] }, { text: 'never' }]);
    const agent = new Agent({ name: 'helper', model, tools: [slow] });
    const sm = mirror();
    const outcome = sm.run(agent, 'wait').then(
      () => undefined,
      (e: unknown) => e,
    );
    await running;
    expect(sm.cancel('user pressed stop')).toBe(true);
    const error = await outcome;
    expect(error).toBeDefined();
    expect(sm.result).toMatchObject({ outcome: 'cancelled' });
    expect(sm.result?.error).toBeInstanceOf(TurnCancelledError);
    expect(model.requests).toHaveLength(1);
    expect(sm.machine.current).toBe('Cancelled');
    expect(validateHistory(sm.machine.history()).issues).toEqual([]);
    expect(runStateOf(error)).toBeInstanceOf(RunState);
  });

  it("records a model error the SDK's retry policy retries as a failed attempt of the same call", async () => {
    const model = cannedModel([{ error: new Error('503 overloaded') }, { text: 'done' }]);
    const agent = new Agent({
      name: 'helper',
      model,
      modelSettings: { retry: { maxRetries: 2, policy: () => true, backoff: { initialDelayMs: 0, jitter: false } } },
    });
    const sm = mirror();
    const result = await sm.run(agent, 'hello');
    expect(result.finalOutput).toBe('done');
    expect(model.requests).toHaveLength(2);
    expect(sm.usage.llmCalls).toBe(2);
    const processed = sm.machine.history().find((r) => r.to === 'ProcessingLLMResponse');
    expect(processed?.data).toMatchObject({ attempts: 2, failures: [{ attempt: 1, error: '503 overloaded' }] });
    expect(states(sm.machine)).toEqual(['WaitingForUserInput', 'SendingToLLM', 'ProcessingLLMResponse', 'EndOfTurn']);
    expectLegal(sm);
  });

  it('records a handoff as a tool call of the same run, naming both agents', async () => {
    const billingModel = cannedModel([{ text: 'refund issued' }]);
    const billing = new Agent({ name: 'billing', model: billingModel });
    const triageModel = cannedModel([{ calls: [{ id: 'h1', name: 'transfer_to_billing' }] }]);
    const triage = new Agent({ name: 'triage', model: triageModel, handoffs: [handoff(billing)] });
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'asm-agents-')), 'handoff.jsonl');
    const sink = JsonlHistorySink.open(file);
    const sm = mirror({ sink, journal: true });
    const result = await sm.run(triage, 'I want a refund');
    sink.close();
    expect(result.finalOutput).toBe('refund issued');
    expect(result.lastAgent?.name).toBe('billing');
    expect(states(sm.machine)).toEqual(TOOL_ROUND_TRIP);
    const ran = sm.machine.history().find((r) => r.to === 'CheckingGitCommits');
    expect(ran?.data).toMatchObject({ results: [{ callId: 'h1', name: 'transfer_to_billing', isError: false }] });
    const loaded = await loadHistory(file);
    expect(validateHistory(loaded.entries).issues).toEqual([]);
    expect(loaded.rejected).toEqual([]);
    const tools = loaded.journal.filter((j) => j.type === 'tool');
    expect(tools.map((t) => (t as { result?: unknown }).result)).toEqual([
      { callId: 'h1', output: 'handed off from triage to billing' },
    ]);
    expectLegal(sm);
  });

  it('maps maxTurns to Error with the SDK error as the reason, and keeps the SDK state on it', async () => {
    const model = cannedModel([
      { calls: [{ id: 'c1', name: 'echo', args: { text: 'a' } }] },
      { calls: [{ id: 'c2', name: 'echo', args: { text: 'b' } }] },
    ]);
    const agent = new Agent({ name: 'helper', model, tools: [echo] });
    const sm = mirror();
    const error = await sm.run(agent, 'loop', { maxTurns: 1 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(MaxTurnsExceededError);
    expect(sm.result).toMatchObject({ outcome: 'error' });
    expect(sm.result?.error?.message).toMatch(/Max turns \(1\) exceeded/);
    expect(sm.machine.current).toBe('Error');
    expect(runStateOf(error)).toBeInstanceOf(RunState);
    expect(validateHistory(sm.machine.history()).issues).toEqual([]);
  });

  it('.run({ stream: true }) mirrors a streamed run as it is consumed', async () => {
    const model = cannedModel([{ calls: [{ id: 'c1', name: 'echo', args: { text: 'hi' } }] }, { text: 'streamed' }]);
    const agent = new Agent({ name: 'helper', model, tools: [echo] });
    const sm = mirror();
    const stream = await sm.run(agent, 'say hi', { stream: true });
    let text = '';
    for await (const chunk of stream.toTextStream()) text += chunk;
    await stream.completed;
    expect(text).toBe('streamed');
    // The mirror hears the end on the stream's completion, a microtask later.
    await new Promise((resolve) => setImmediate(resolve));
    expect(sm.result).toMatchObject({ outcome: 'end_of_turn', text: 'streamed' });
    expect(sm.usage).toMatchObject({ llmCalls: 2, toolCalls: 1 });
    expectLegal(sm);
  });

  it('.run({ stream: true }) stops a streamed run before the call that would pass the budget; result.state resumes', async () => {
    const model = cannedModel([{ calls: [{ id: 'c1', name: 'echo', args: { text: 'hi' } }] }, { text: 'streamed' }]);
    const agent = new Agent({ name: 'helper', model, tools: [echo] });
    const sm = mirror({ budget: { maxToolCalls: 1 } });
    const stream = await sm.run(agent, 'say hi', { stream: true });
    const consumed = (async () => {
      for await (const _event of stream) void _event;
    })().then(
      () => undefined,
      (e: unknown) => e,
    );
    const consumedError = await consumed;
    const completedError = await stream.completed.then(
      () => undefined,
      (e: unknown) => e,
    );
    await new Promise((resolve) => setImmediate(resolve));
    // The stream's events end quietly; `completed` rejects with the mirror's reason, which `error` holds too.
    expect(consumedError).toBeUndefined();
    expect(completedError).toBeInstanceOf(BudgetExceededError);
    expect(stream.error).toBe(completedError);
    expect(sm.result?.error).toBe(completedError);
    expect(model.requests).toHaveLength(1);
    expect(sm.result).toMatchObject({ outcome: 'budget_exceeded' });
    expectLegal(sm);
    const again = mirror();
    const result = await again.run(agent, stream.state);
    expect(result.finalOutput).toBe('streamed');
    expect(model.requests).toHaveLength(2);
  });

  it('.run() with a session leaves the input to the SDK, which adds the session history', async () => {
    const model = cannedModel([{ text: 'first' }, { text: 'second' }]);
    const agent = new Agent({ name: 'helper', model });
    const session = new MemorySession();
    const sm = mirror();
    await sm.run(agent, 'one', { session });
    const result = await sm.run(agent, 'two', { session });
    expect(result.finalOutput).toBe('second');
    expect(JSON.stringify(model.requests[1]!.input)).toContain('first');
    expect(sm.result).toMatchObject({ outcome: 'end_of_turn', turn: 2 });
    expectLegal(sm);
  });

  it('rejects a second concurrent run and bad arguments with errors naming them', async () => {
    const sm = mirror();
    const model = cannedModel([{ text: 'one' }]);
    const agent = new Agent({ name: 'helper', model });
    const first = sm.run(agent, 'a');
    await expect(sm.run(agent, 'b')).rejects.toBeInstanceOf(TurnInProgressError);
    await expect(first).resolves.toMatchObject({ finalOutput: 'one' });
    expect(() => sm.agent({} as Agent)).toThrow(/agent/);
    expect(() => sm.tools('x' as never)).toThrow(/tools/);
    expect(() => agentsMirror({ runner: {} as never })).toThrow(/runner/);
  });
});
