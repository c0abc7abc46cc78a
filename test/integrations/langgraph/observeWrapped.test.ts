// LangGraphMirror observing 'wrapped': the model and tools it wrapped report to it as their own
// callbacks, and lg.run() bounds the run; the graph runs with no handler of the mirror's. What
// the random runs of observeModes.property.test.ts do not reach: bad use refused by name,
// hand-built graphs, retries, interrupts, cancels, the caller's own handlers.
import { type AIMessage } from '@langchain/core/messages';
import { BaseCallbackHandler } from '@langchain/core/callbacks/base';
import { tool } from '@langchain/core/tools';
import { Command, END, MemorySaver, MessagesAnnotation, START, StateGraph, interrupt } from '@langchain/langgraph';
import { ToolNode, createReactAgent } from '@langchain/langgraph/prebuilt';
import { getEventListeners } from 'node:events';
import { z } from 'zod';
import { BudgetExceededError, InvalidArgumentError, OperationError, TurnCancelledError } from 'agent-state-machine';
import { validateHistory } from 'agent-state-machine/history';
import { LangGraphMirror } from '../../../lib/integrations/langgraph';
import { ScriptedChatModel } from './scriptedChatModel';
import { TOOL_ROUND_TRIP } from '../../helpers/frameworkRuns';
import { ask, echo, expectLegal, slowTool } from './graphFixtures';

function wrappedMirror(options: ConstructorParameters<typeof LangGraphMirror>[0] = {}): LangGraphMirror {
  let t = Date.UTC(2026, 0, 1);
  return new LangGraphMirror({ logger: false, clock: () => (t += 1), observe: 'wrapped', ...options });
}

const states = (lg: LangGraphMirror): string[] => lg.machine.history().map((r) => r.to);
const settle = (p: Promise<unknown>): Promise<unknown> =>
  p.then(
    () => undefined,
    (e: unknown) => e,
  );

beforeEach(() => jest.spyOn(console, 'error').mockImplementation(() => undefined));
afterEach(() => jest.restoreAllMocks());

describe("LangGraphMirror observing 'wrapped'", () => {
  it('refuses an unknown observe, a run() on a graph it did not wrap, and a call outside run(), by name and before any request', async () => {
    expect(() => new LangGraphMirror({ observe: 'nodes' as never })).toThrow(InvalidArgumentError);
    expect(() => new LangGraphMirror({ observe: 'nodes' as never })).toThrow(/observe.*'graph'.*'wrapped'.*nodes/s);

    const llm = new ScriptedChatModel([{ text: 'done' }, { text: 'done' }]);
    const lg = wrappedMirror();
    const bare = createReactAgent({ llm, tools: [echo] });
    const refused = await settle(lg.run(bare, ask('hi')));
    expect(refused).toBeInstanceOf(InvalidArgumentError);
    expect((refused as Error).message).toMatch(/lg\.wrapModel\(model\) and lg\.wrapTools\(tools\)/);
    const onlyModel = wrappedMirror();
    onlyModel.wrapModel(llm);
    expect(await settle(onlyModel.run(bare, ask('hi')))).toMatchObject({
      message: expect.stringMatching(/built on lg\.wrapTools\(tools\)/),
    });
    expect(llm.requests).toHaveLength(0);

    // The wrapped graph invoked without run(): no run bounds the call, so it is refused, not made.
    const agent = createReactAgent({ llm: lg.wrapModel(llm), tools: lg.wrapTools([echo]) });
    const outside = await settle(agent.invoke(ask('hi')));
    expect(outside).toBeInstanceOf(OperationError);
    expect((outside as Error).message).toMatch(/outside lg\.run\(\).*invoke the graph through it/);
    expect(llm.requests).toHaveLength(0);
    expect(lg.machine.history()).toEqual([]);

    // Through run(), the same graph runs.
    await lg.run(agent, ask('hi'));
    expect(lg.result).toMatchObject({ outcome: 'end_of_turn', text: 'done' });
    expect(llm.requests).toHaveLength(1);
  });

  it("mirrors a tool round trip as the graph's callbacks would, and the caller's own handlers still hear the graph", async () => {
    const heard: string[] = [];
    class Tracer extends BaseCallbackHandler {
      name = 'tracer';
      override handleChatModelStart(): void {
        heard.push('model');
      }
      override handleToolStart(): void {
        heard.push('tool');
      }
      override handleChainStart(_c: unknown, _i: unknown, _r: string, parent?: string): void {
        if (parent === undefined) heard.push('graph');
      }
    }
    const llm = new ScriptedChatModel([
      { calls: [{ id: 'c1', name: 'echo', args: { text: 'hi' } }] },
      { text: 'done' },
    ]);
    const lg = wrappedMirror();
    const agent = createReactAgent({ llm: lg.wrapModel(llm), tools: lg.wrapTools([echo]) });
    // The point of the mode: LangChain does not tell the mirror of the graph's nodes and writes.
    const chains = jest.spyOn(lg, 'handleChainStart');
    const out = await lg.run(agent, ask('say hi'), { callbacks: [new Tracer()] });
    expect(chains).not.toHaveBeenCalled();
    expect(out.messages.at(-1)?.content).toBe('done');
    expect(heard).toEqual(['graph', 'model', 'tool', 'model']);
    expect(lg.result).toMatchObject({ outcome: 'end_of_turn', text: 'done' });
    expect(lg.usage).toMatchObject({ llmCalls: 2, toolCalls: 1, inputTokens: 200, outputTokens: 20 });
    expect(states(lg)).toEqual(TOOL_ROUND_TRIP);
    expectLegal(lg);
  });

  it('caps a hand-built graph through its wrapped model and ToolNode: the refused tool never runs', async () => {
    let runs = 0;
    const count = tool(async () => `run ${++runs}`, { name: 'count', description: 'Counts', schema: z.object({}) });
    const llm = new ScriptedChatModel([
      { calls: [{ id: 'c1', name: 'count' }], inputTokens: 100, outputTokens: 10 },
      { calls: [{ id: 'c2', name: 'count' }], inputTokens: 100, outputTokens: 10 },
      { text: 'done' },
    ]);
    // The second response spends the tokens: its tool is refused, and the call that would carry the refusal too.
    const lg = wrappedMirror({ budget: { maxTokens: 150 } });
    const model = lg.wrapModel(llm);
    const graph = new StateGraph(MessagesAnnotation)
      .addNode('agent', async (state) => ({ messages: [await model.invoke(state.messages)] }))
      .addNode('tools', new ToolNode(lg.wrapTools([count])))
      .addEdge(START, 'agent')
      .addConditionalEdges('agent', (state) =>
        ((state.messages.at(-1) as AIMessage).tool_calls?.length ?? 0) > 0 ? 'tools' : END,
      )
      .addEdge('tools', 'agent')
      .compile();
    expect(await settle(lg.run(graph, ask('count')))).toBeInstanceOf(BudgetExceededError);
    expect(runs).toBe(1);
    expect(llm.requests).toHaveLength(2);
    expect(lg.result).toMatchObject({ outcome: 'budget_exceeded' });
    const tools = lg.machine.history().filter((r) => r.to === 'CheckingGitCommits');
    expect(tools.at(-1)?.data).toMatchObject({
      results: [{ callId: 'c2', isError: true, note: expect.stringMatching(/^not run: budget exceeded/) }],
    });
    expectLegal(lg);
  });

  it("records a model error retried by a node's retryPolicy as failed attempts of one call", async () => {
    const llm = new ScriptedChatModel([{ error: new Error('503 overloaded') }, { text: 'done' }]);
    const lg = wrappedMirror();
    lg.wrapTools([]);
    const model = lg.wrapModel(llm);
    const graph = new StateGraph(MessagesAnnotation)
      .addNode('agent', async (state) => ({ messages: [await model.invoke(state.messages)] }), {
        retryPolicy: { maxAttempts: 3, initialInterval: 0, jitter: false, retryOn: () => true },
      })
      .addEdge(START, 'agent')
      .addEdge('agent', END)
      .compile();
    await lg.run(graph, ask('hello'));
    expect(lg.usage.llmCalls).toBe(2);
    const processed = lg.machine.history().find((r) => r.to === 'ProcessingLLMResponse');
    expect(processed?.data).toMatchObject({ attempts: 2, failures: [{ attempt: 1, error: '503 overloaded' }] });
    expect(states(lg)).toEqual(['WaitingForUserInput', 'SendingToLLM', 'ProcessingLLMResponse', 'EndOfTurn']);
    expectLegal(lg);
  });

  it('ends a run stopped at an interrupt() as cancelled; run() with the Command is the next run', async () => {
    const approve = tool(async () => `approved: ${String(interrupt('approve the refund?'))}`, {
      name: 'approve',
      description: 'Asks a person',
      schema: z.object({}),
    });
    const llm = new ScriptedChatModel([{ calls: [{ id: 'c1', name: 'approve' }] }, { text: 'refunded' }]);
    const lg = wrappedMirror();
    const agent = createReactAgent({
      llm: lg.wrapModel(llm),
      tools: lg.wrapTools([approve]),
      checkpointer: new MemorySaver(),
    });
    const config = { configurable: { thread_id: 'hitl' } };
    const paused = await lg.run(agent, ask('refund me'), config);
    expect(paused).toHaveProperty('__interrupt__');
    expect(lg.result).toMatchObject({ outcome: 'cancelled' });
    expect(lg.result?.error?.message).toMatch(/interrupted: approve the refund\?/);
    const out = await lg.run(agent, new Command({ resume: 'yes' }), config);
    expect(out.messages.at(-1)?.content).toBe('refunded');
    expect(lg.result).toMatchObject({ outcome: 'end_of_turn', turn: 2 });
    expectLegal(lg, 2);
  });

  it("cancels through lg.cancel() and the caller's signal, mid-tool, with no abort listener left behind", async () => {
    const lg = wrappedMirror();
    const caller = new AbortController();
    const agent = createReactAgent({
      llm: lg.wrapModel(new ScriptedChatModel(Array.from({ length: 20 }, () => ({ text: 'done' })))),
      tools: lg.wrapTools([echo]),
    });
    for (let i = 0; i < 20; i++) await lg.run(agent, ask(`run ${i}`), { signal: caller.signal });
    expect(getEventListeners(lg.signal, 'abort')).toHaveLength(0);
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
    expect(lg.result).toMatchObject({ outcome: 'end_of_turn', turn: 20 });

    for (const stop of [
      (): unknown => lg.cancel('user pressed stop'),
      (): void => caller.abort('the caller gave up'),
    ]) {
      const { slow, running } = slowTool();
      const llm = new ScriptedChatModel([{ calls: [{ id: 'c1', name: 'slow' }] }, { text: 'never' }]);
      const slowAgent = createReactAgent({ llm: lg.wrapModel(llm), tools: lg.wrapTools([slow]) });
      const outcome = settle(lg.run(slowAgent, ask('wait'), { signal: caller.signal }));
      await running;
      stop();
      expect(await outcome).toBeDefined();
      expect(lg.result).toMatchObject({ outcome: 'cancelled' });
      expect(lg.result?.error).toBeInstanceOf(TurnCancelledError);
      expect(llm.requests).toHaveLength(1);
      expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
      expect(validateHistory(lg.machine.history()).issues).toEqual([]);
    }
  });

  it('maps recursionLimit to Error with the GraphRecursionError as the reason', async () => {
    const llm = new ScriptedChatModel([
      { calls: [{ id: 'c1', name: 'echo', args: { text: 'a' } }] },
      { calls: [{ id: 'c2', name: 'echo', args: { text: 'b' } }] },
    ]);
    const lg = wrappedMirror();
    const agent = createReactAgent({ llm: lg.wrapModel(llm), tools: lg.wrapTools([echo]) });
    const error = await settle(lg.run(agent, ask('loop'), { recursionLimit: 3 }));
    expect((error as Error).name).toBe('GraphRecursionError');
    expect(lg.result).toMatchObject({ outcome: 'error' });
    expect(lg.result?.error?.message).toMatch(/Recursion limit of 3/);
    expect(validateHistory(lg.machine.history()).issues).toEqual([]);
  });

  it('does not see a model the graph calls that it did not wrap (the documented limit of this mode)', async () => {
    const wrapped = new ScriptedChatModel([{ text: 'draft' }]);
    const other = new ScriptedChatModel([{ text: 'polished' }]);
    const lg = wrappedMirror();
    lg.wrapTools([]);
    const model = lg.wrapModel(wrapped);
    const graph = new StateGraph(MessagesAnnotation)
      .addNode('draft', async (state) => ({ messages: [await model.invoke(state.messages)] }))
      .addNode('polish', async (state) => ({ messages: [await other.invoke(state.messages)] }))
      .addEdge(START, 'draft')
      .addEdge('draft', 'polish')
      .addEdge('polish', END)
      .compile();
    await lg.run(graph, ask('write'));
    expect(other.requests).toHaveLength(1);
    expect(lg.usage.llmCalls).toBe(1);
    // Observing the graph, the same mirror sees both.
    const all = new LangGraphMirror({ logger: false });
    const seen = new ScriptedChatModel([{ text: 'draft' }]);
    const unseen = new ScriptedChatModel([{ text: 'polished' }]);
    await all.run(
      new StateGraph(MessagesAnnotation)
        .addNode('draft', async (state) => ({ messages: [await seen.invoke(state.messages)] }))
        .addNode('polish', async (state) => ({ messages: [await unseen.invoke(state.messages)] }))
        .addEdge(START, 'draft')
        .addEdge('draft', 'polish')
        .addEdge('polish', END)
        .compile(),
      ask('write'),
    );
    expect(all.usage.llmCalls).toBe(2);
  });
});
