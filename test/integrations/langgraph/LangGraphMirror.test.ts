import { type AIMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { Command, END, MemorySaver, MessagesAnnotation, START, StateGraph, interrupt } from '@langchain/langgraph';
import { ToolNode, createReactAgent } from '@langchain/langgraph/prebuilt';
import { getEventListeners } from 'node:events';
import { z } from 'zod';
import { BudgetExceededError, TurnCancelledError, type StateMachine, type StateName } from 'agent-state-machine';
import { validateHistory } from 'agent-state-machine/history';
import { langGraphMirror, type LangGraphMirror } from '../../../lib/integrations/langgraph';
import { ScriptedChatModel } from './scriptedChatModel';
import { TOOL_ROUND_TRIP } from '../../helpers/frameworkRuns';
import { ask, echo, expectLegal, slowTool } from './graphFixtures';

function stepClock(): () => number {
  let t = Date.UTC(2026, 0, 1);
  return () => (t += 1);
}

function mirror(options: Parameters<typeof langGraphMirror>[0] = {}): LangGraphMirror {
  return langGraphMirror({ logger: false, clock: stepClock(), ...options });
}

const states = (m: StateMachine<StateName>): string[] => m.history().map((r) => r.to);

// The handler reports a refused call with console.error before it throws (LangChain does, for raiseError handlers).
beforeEach(() => jest.spyOn(console, 'error').mockImplementation(() => undefined));
afterEach(() => jest.restoreAllMocks());

describe('LangGraphMirror', () => {
  it('mirrors a prebuilt ReAct agent: a tool round trip is one legal, unforced turn', async () => {
    const llm = new ScriptedChatModel([
      { calls: [{ id: 'c1', name: 'echo', args: { text: 'hi' } }] },
      { text: 'done' },
    ]);
    const agent = createReactAgent({ llm, tools: [echo] });
    const lg = mirror();
    const out = await agent.invoke(ask('say hi'), { callbacks: [lg], signal: lg.signal });
    expect(out.messages.at(-1)?.content).toBe('done');
    expect(lg.result).toMatchObject({ outcome: 'end_of_turn', text: 'done' });
    expect(lg.usage).toMatchObject({ llmCalls: 2, toolCalls: 1, inputTokens: 200, outputTokens: 20 });
    expect(states(lg.machine)).toEqual(TOOL_ROUND_TRIP);
    expect(lg.machine.history()[2]?.data).toMatchObject({ model: 'scripted-1', toolCalls: 1 });
    expectLegal(lg);
  });

  it('stops the graph before the model call once maxToolCalls is spent; a checkpointed thread resumes it', async () => {
    const llm = new ScriptedChatModel([
      { calls: [{ id: 'c1', name: 'echo', args: { text: 'hi' } }] },
      { text: 'done' },
    ]);
    const agent = createReactAgent({ llm, tools: [echo], checkpointer: new MemorySaver() });
    const lg = mirror({ budget: { maxToolCalls: 1 } });
    const config = { callbacks: [lg], configurable: { thread_id: 'budget' } };
    const error = await agent.invoke(ask('say hi'), config).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(BudgetExceededError);
    expect(llm.requests).toHaveLength(1);
    expect(lg.result).toMatchObject({ outcome: 'budget_exceeded' });
    expect(lg.machine.current).toBe('BudgetExceeded');
    expectLegal(lg);

    // LangGraph's own resume: invoke the thread again with no input; the model node runs again.
    const again = mirror();
    const out = await agent.invoke(null, { callbacks: [again], configurable: { thread_id: 'budget' } });
    expect(out.messages.at(-1)?.content).toBe('done');
    expect(llm.requests).toHaveLength(2);
    expect(JSON.stringify(llm.requests[1])).toContain('echo: hi');
    expect(again.result).toMatchObject({ outcome: 'end_of_turn' });
  });

  it('refuses a tool call once a response spent maxTokens: the tool never runs and the run ends in BudgetExceeded', async () => {
    let runs = 0;
    const count = tool(async () => `run ${++runs}`, { name: 'count', description: 'Counts', schema: z.object({}) });
    const llm = new ScriptedChatModel([
      { calls: [{ id: 'c1', name: 'count' }], inputTokens: 100, outputTokens: 10 },
      { calls: [{ id: 'c2', name: 'count' }], inputTokens: 100, outputTokens: 10 },
      { text: 'done' },
    ]);
    const lg = mirror({ budget: { maxTokens: 150 } });
    const error = await createReactAgent({ llm, tools: [count] })
      .invoke(ask('count'), { callbacks: [lg] })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(BudgetExceededError);
    expect(runs).toBe(1);
    expect(llm.requests).toHaveLength(2);
    expect(lg.result).toMatchObject({ outcome: 'budget_exceeded' });
    const tools = lg.machine.history().filter((r) => r.to === 'CheckingGitCommits');
    expect(tools.at(-1)?.data).toMatchObject({
      results: [{ callId: 'c2', isError: true, note: expect.stringMatching(/^not run: budget exceeded/) }],
    });
    expectLegal(lg);
  });

  it('.cancel() during a tool: the tool gets the abort, the run ends cancelled and the history stays legal', async () => {
    const { slow, running } = slowTool();
    const llm = new ScriptedChatModel([{ calls: [{ id: 'c1', name: 'slow' }] }, { text: 'never' }]);
    const lg = mirror();
    const outcome = createReactAgent({ llm, tools: [slow] })
      .invoke(ask('wait'), { callbacks: [lg], signal: lg.signal })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    await running;
    expect(lg.cancel('user pressed stop')).toBe(true);
    expect(await outcome).toBeDefined();
    expect(lg.result).toMatchObject({ outcome: 'cancelled' });
    expect(lg.result?.error).toBeInstanceOf(TurnCancelledError);
    expect(llm.requests).toHaveLength(1);
    expect(lg.machine.current).toBe('Cancelled');
    expect(validateHistory(lg.machine.history()).issues).toEqual([]);
  });

  it("records a model error retried by a node's retryPolicy as failed attempts of one call", async () => {
    const llm = new ScriptedChatModel([{ error: new Error('503 overloaded') }, { text: 'done' }]);
    const graph = new StateGraph(MessagesAnnotation)
      .addNode('agent', async (state) => ({ messages: [await llm.invoke(state.messages)] }), {
        retryPolicy: { maxAttempts: 3, initialInterval: 0, jitter: false, retryOn: () => true },
      })
      .addEdge(START, 'agent')
      .addEdge('agent', END)
      .compile();
    const lg = mirror();
    const out = await graph.invoke(ask('hello'), { callbacks: [lg] });
    expect((out.messages.at(-1) as AIMessage).content).toBe('done');
    expect(lg.usage.llmCalls).toBe(2);
    const processed = lg.machine.history().find((r) => r.to === 'ProcessingLLMResponse');
    expect(processed?.data).toMatchObject({ attempts: 2, failures: [{ attempt: 1, error: '503 overloaded' }] });
    expect(states(lg.machine)).toEqual(['WaitingForUserInput', 'SendingToLLM', 'ProcessingLLMResponse', 'EndOfTurn']);
    expectLegal(lg);
  });

  it('mirrors a hand-built graph with a ToolNode the same way as the prebuilt agent', async () => {
    const llm = new ScriptedChatModel([{ calls: [{ id: 'c1', name: 'echo', args: { text: 'x' } }] }, { text: 'done' }]);
    const graph = new StateGraph(MessagesAnnotation)
      .addNode('agent', async (state) => ({ messages: [await llm.invoke(state.messages)] }))
      .addNode('tools', new ToolNode([echo]))
      .addEdge(START, 'agent')
      .addConditionalEdges('agent', (state) =>
        ((state.messages.at(-1) as AIMessage).tool_calls?.length ?? 0) > 0 ? 'tools' : END,
      )
      .addEdge('tools', 'agent')
      .compile();
    const lg = mirror();
    await graph.invoke(ask('x'), { callbacks: [lg] });
    expect(lg.result).toMatchObject({ outcome: 'end_of_turn', text: 'done' });
    expect(lg.usage).toMatchObject({ llmCalls: 2, toolCalls: 1 });
    expectLegal(lg);
  });

  it("run() gives each invoke a signal of its own: no abort listener piles up on the mirror's or the caller's signal, and both still cancel", async () => {
    const lg = mirror();
    const caller = new AbortController();
    const agent = createReactAgent({
      llm: new ScriptedChatModel(Array.from({ length: 60 }, () => ({ text: 'done' }))),
      tools: [echo],
    });
    for (let i = 0; i < 30; i++) await lg.run(agent, ask(`run ${i}`), { signal: caller.signal });
    // LangGraph leaves a listener on the signal an invoke is given: before, one a run on these (Node warns past 10).
    expect(getEventListeners(lg.signal, 'abort')).toHaveLength(0);
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
    expect(lg.result).toMatchObject({ outcome: 'end_of_turn', turn: 30 });

    for (const stop of [
      (): unknown => lg.cancel('user pressed stop'),
      (): void => caller.abort('the caller gave up'),
    ]) {
      const { slow, running } = slowTool();
      const llm = new ScriptedChatModel([{ calls: [{ id: 'c1', name: 'slow' }] }, { text: 'never' }]);
      const outcome = lg.run(createReactAgent({ llm, tools: [slow] }), ask('wait'), { signal: caller.signal }).then(
        () => undefined,
        (e: unknown) => e,
      );
      await running;
      stop();
      expect(await outcome).toBeDefined();
      expect(lg.result).toMatchObject({ outcome: 'cancelled' });
      expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
    }
  });

  it('ends a run stopped at an interrupt() as cancelled; the resumed thread is the next run', async () => {
    const approve = tool(async () => `approved: ${String(interrupt('approve the refund?'))}`, {
      name: 'approve',
      description: 'Asks a person',
      schema: z.object({}),
    });
    const llm = new ScriptedChatModel([{ calls: [{ id: 'c1', name: 'approve' }] }, { text: 'refunded' }]);
    const agent = createReactAgent({ llm, tools: [approve], checkpointer: new MemorySaver() });
    const lg = mirror();
    const config = { callbacks: [lg], configurable: { thread_id: 'hitl' } };
    const paused = await agent.invoke(ask('refund me'), config);
    expect(paused).toHaveProperty('__interrupt__');
    expect(lg.result).toMatchObject({ outcome: 'cancelled' });
    expect(lg.result?.error?.message).toMatch(/interrupted: approve the refund\?/);
    const out = await agent.invoke(new Command({ resume: 'yes' }), config);
    expect(out.messages.at(-1)?.content).toBe('refunded');
    expect(lg.result).toMatchObject({ outcome: 'end_of_turn', turn: 2 });
    // Two forced moves, each with its reason: the stop during RunningTool (as the adapter's cancel
    // there), and the resumed tool, which runs outside a response of the new run.
    expectLegal(lg, 2);
    expect(
      lg.machine
        .history()
        .filter((r) => r.forced)
        .map((r) => `${r.from} -> ${r.to}`),
    ).toEqual(['RunningTool -> Cancelled', 'WaitingForUserInput -> RunningTool']);
  });

  it('maps recursionLimit to Error with the GraphRecursionError as the reason', async () => {
    const llm = new ScriptedChatModel([
      { calls: [{ id: 'c1', name: 'echo', args: { text: 'a' } }] },
      { calls: [{ id: 'c2', name: 'echo', args: { text: 'b' } }] },
    ]);
    const lg = mirror();
    const error = await createReactAgent({ llm, tools: [echo] })
      .invoke(ask('loop'), { callbacks: [lg], recursionLimit: 3 })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect((error as Error).name).toBe('GraphRecursionError');
    expect(lg.result).toMatchObject({ outcome: 'error' });
    expect(lg.result?.error?.message).toMatch(/Recursion limit of 3/);
    expect(lg.machine.current).toBe('Error');
    expect(validateHistory(lg.machine.history()).issues).toEqual([]);
  });

  it('rejects bad options with an error naming them', () => {
    expect(() => langGraphMirror(null as never)).toThrow(/options/);
    expect(() => langGraphMirror({ mirror: {} } as never)).toThrow(/mirror/);
  });
});
