// LangGraph's interrupt() as a tool approval: with `approvals: true`, a graph that stops at an
// interrupt() parks the mirrored run in AwaitingApproval with the call it asks about, and the
// Command from lg.answered() continues the same run (same run number, same budget) on the same
// thread. The real @langchain/langgraph and ChatOpenAI against the strict local server: the
// server sees no request twice — not even the one a node makes again before its interrupt()
// when LangGraph re-runs the node on resume (langgraph#7780).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { type AIMessage, ToolMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { Command, END, MemorySaver, MessagesAnnotation, START, StateGraph, interrupt } from '@langchain/langgraph';
import { createReactAgent } from '@langchain/langgraph/prebuilt';
import { ChatOpenAI } from '@langchain/openai';
import { z } from 'zod';
import type { RecordedLine } from 'agent-state-machine';
import { JsonlHistorySink, loadHistory, validateHistory } from 'agent-state-machine/history';
import { langGraphMirror, type LangGraphMirror, type LangGraphObserve } from '../../../lib/integrations/langgraph';
import { startOpenAIChatServer, type OpenAIChatServer } from '../../../examples/servers/openaiChatServer';

let server: OpenAIChatServer;
beforeEach(async () => {
  server = await startOpenAIChatServer({
    respond: (body: { messages: Array<{ role: string; content: unknown }> }) => {
      const results = body.messages.filter((m) => m.role === 'tool');
      if (results.length > 0) return { content: `done: ${results.map((m) => String(m.content)).join(' | ')}` };
      return {
        toolCalls: [
          { id: 'c1', name: 'ls', arguments: '{"dir":"."}' },
          { id: 'c2', name: 'deploy', arguments: '{"target":"prod"}' },
        ],
      };
    },
  });
  // LangChain logs each error a raising handler throws with console.error.
  jest.spyOn(console, 'error').mockImplementation(() => undefined);
});
afterEach(async () => {
  jest.restoreAllMocks();
  await server.close();
});

const llm = () =>
  new ChatOpenAI({ model: 'gpt-local', apiKey: 'sk', configuration: { baseURL: server.baseURL }, maxRetries: 0 });
const ask = { messages: [{ role: 'user', content: 'ship it' }] };
const thread = (id: string) => ({ configurable: { thread_id: id } });

/** `ls`, and `deploy`, which asks a person inside the tool and runs only when approved. */
function tools(ran: string[]) {
  const ls = tool(async () => (ran.push('ls'), 'a b'), {
    name: 'ls',
    description: 'Lists a folder',
    schema: z.object({ dir: z.string() }),
  });
  const deploy = tool(
    async ({ target }: { target: string }) => {
      const answer = interrupt(`deploy to ${target}?`) as { approved: boolean; reason?: string };
      if (!answer.approved) return `denied: ${answer.reason}`;
      ran.push(`deploy ${target}`);
      return 'deployed';
    },
    { name: 'deploy', description: 'Deploys', schema: z.object({ target: z.string() }) },
  );
  return [ls, deploy];
}

/** A ReAct agent (each tool call its own task, version 'v2') whose deploy interrupts, on the mirror's wrappers. */
function agentOf(lg: LangGraphMirror, ran: string[]) {
  return createReactAgent({
    llm: lg.wrapModel(llm()),
    tools: lg.wrapTools(tools(ran)),
    checkpointer: new MemorySaver(),
    version: 'v2',
  });
}

function expectBodiesOnce(count: number): void {
  const bodies = server.exchanges.map((e) => JSON.stringify(e.body));
  expect(bodies).toHaveLength(count);
  expect(new Set(bodies).size).toBe(count);
  expect(server.rejected).toEqual([]);
}

describe.each<LangGraphObserve>(['graph', 'wrapped'])("interrupt() inside a tool (observe '%s')", (observe) => {
  it('parks the run in AwaitingApproval; approved, the same run goes on and ends, nothing sent or run twice', async () => {
    const ran: string[] = [];
    const lg = langGraphMirror({ approvals: true, logger: false, observe, budget: { maxToolCalls: 3 } });
    const agent = agentOf(lg, ran);
    const paused = await lg.run(agent, ask, thread('a'));
    expect(paused).toHaveProperty('__interrupt__');
    expect(lg.mirror.running).toBe(true);
    expect(lg.machine.current as string).toBe('AwaitingApproval');
    expect(lg.mirror.approvals.pending).toEqual([{ callId: 'c2', name: 'deploy', input: { target: 'prod' } }]);
    const parked = lg.machine.history().at(-1)!;
    expect(parked.data).toEqual({ calls: [{ callId: 'c2', name: 'deploy', input: { target: 'prod' } }] });
    expect(ran).toEqual(['ls']);
    const next = lg.answered();
    lg.mirror.approvals.approve('c2');
    const command = await next;
    expect(command).toBeInstanceOf(Command);
    expect(command!.resume).toEqual({ approved: true });
    const out = await lg.run(agent, command!, thread('a'));
    expect(out.messages.at(-1)?.content).toBe('done: a b | deployed');
    expect(ran).toEqual(['ls', 'deploy prod']);
    // One run, its two tool calls counted once each (a budget of three, which a third would reach, is not).
    expect(lg.result).toMatchObject({ outcome: 'end_of_turn', turn: 1 });
    expect(lg.usage).toMatchObject({ llmCalls: 2, toolCalls: 2 });
    expectBodiesOnce(2);
    const moves = lg.machine.history().map((r) => r.to);
    expect(moves).toContain('AwaitingApproval');
    // One run: started once, parked once, on to RunningTool with the answer.
    expect(moves.filter((to) => to === 'WaitingForUserInput')).toHaveLength(1);
    expect(
      lg.machine
        .history()
        .filter((r) => (r.from as string) === 'AwaitingApproval')
        .map((r) => r.to),
    ).toEqual(['RunningTool']);
    expect(validateHistory(lg.machine.history(), lg.machine.table)).toMatchObject({ ok: true, issues: [] });
  });

  it('denied with a reason, the node reads { approved: false, reason }, the tool does not run, the model hears the denial', async () => {
    const ran: string[] = [];
    const lg = langGraphMirror({ approvals: true, logger: false, observe });
    const agent = agentOf(lg, ran);
    await lg.run(agent, ask, thread('d'));
    const next = lg.answered();
    lg.mirror.approvals.deny('c2', 'not today');
    expect((await next)!.resume).toEqual({ approved: false, reason: 'not today' });
    const out = await lg.run(agent, (await next)!, thread('d'));
    expect(out.messages.at(-1)?.content).toBe('done: a b | denied: not today');
    expect(ran).toEqual(['ls']);
    expect(lg.result).toMatchObject({ outcome: 'end_of_turn', turn: 1 });
    // The deploy started (and was counted) before its interrupt().
    expect(lg.usage).toMatchObject({ llmCalls: 2, toolCalls: 2 });
    expectBodiesOnce(2);
    expect(JSON.stringify(server.exchanges.at(-1)!.body)).toContain('denied: not today');
  });

  it('cancelled while it waits, the run ends cancelled and answered() gives nothing; the next invoke is a new run', async () => {
    const ran: string[] = [];
    const lg = langGraphMirror({ approvals: true, logger: false, observe });
    const agent = agentOf(lg, ran);
    await lg.run(agent, ask, thread('c'));
    const next = lg.answered();
    expect(lg.cancel('nobody answered')).toBe(true);
    expect(await next).toBeUndefined();
    expect(lg.result).toMatchObject({ outcome: 'cancelled', turn: 1 });
    expect(() => lg.mirror.approvals.approve('c2')).toThrow(/callId.*went on or ended/);
    await lg.run(agent, ask, thread('c2'));
    expect(lg.mirror.turn).toBe(2);
    expect(lg.machine.current as string).toBe('AwaitingApproval');
  });

  it('refuses by name a continuation before the answers, and a new input while the run is parked', async () => {
    const lg = langGraphMirror({ approvals: true, logger: false, observe });
    const agent = agentOf(lg, []);
    await lg.run(agent, ask, thread('r'));
    await expect(lg.run(agent, new Command({ resume: { approved: true } }), thread('r'))).rejects.toThrow(
      /input.*the Command from lg\.answered\(\), once every waiting call has an answer \(run 1 waits for approval of c2\)/,
    );
    lg.mirror.approvals.approve('c2');
    await expect(lg.run(agent, ask, thread('r'))).rejects.toThrow(/only its answers continue it/);
    expect(lg.machine.current as string).toBe('RunningTool');
  });
});

describe('interrupt() in a review node before the tools run', () => {
  /**
   * agent → review → tools → agent: the review node asks about the response's first tool call
   * (`interrupt(toolCall)`); denied, it answers the calls itself and goes back to the agent. With
   * `remake`, the review node makes its own model call before its interrupt() — LangGraph re-runs
   * it on resume, and makes the call again.
   */
  function reviewGraph(lg: LangGraphMirror, ran: string[], remake = false) {
    const model = lg.wrapModel(llm());
    const [ls, deploy] = lg.wrapTools([
      tool(async () => (ran.push('ls'), 'a b'), {
        name: 'ls',
        description: 'Lists',
        schema: z.object({ dir: z.string() }),
      }),
      tool(async ({ target }: { target: string }) => (ran.push(`deploy ${target}`), 'deployed'), {
        name: 'deploy',
        description: 'Deploys',
        schema: z.object({ target: z.string() }),
      }),
    ]);
    const bound = model.bindTools([ls!, deploy!]);
    const byName = { ls: ls!, deploy: deploy! } as unknown as Record<
      string,
      { invoke(call: unknown): Promise<ToolMessage> }
    >;
    return new StateGraph(MessagesAnnotation)
      .addNode('agent', async (s) => ({ messages: [await bound.invoke(s.messages)] }))
      .addNode(
        'review',
        async (s) => {
          if (remake) await model.invoke([{ role: 'user', content: 'summarize the plan' }]);
          const last = s.messages.at(-1) as AIMessage;
          const calls = last.tool_calls ?? [];
          const answer = interrupt(calls.find((c) => c.name === 'deploy')) as { approved: boolean; reason?: string };
          if (answer.approved) return new Command({ goto: 'tools' });
          return new Command({
            goto: 'agent',
            update: {
              messages: calls.map((c) => new ToolMessage({ tool_call_id: c.id!, content: `denied: ${answer.reason}` })),
            },
          });
        },
        { ends: ['tools', 'agent'] },
      )
      .addNode('tools', async (s) => {
        const last = s.messages.at(-1) as AIMessage;
        const messages = [];
        for (const c of last.tool_calls ?? []) messages.push(await byName[c.name]!.invoke({ ...c, type: 'tool_call' }));
        return { messages };
      })
      .addEdge(START, 'agent')
      .addConditionalEdges('agent', (s) => ((s.messages.at(-1) as AIMessage).tool_calls?.length ? 'review' : END))
      .addEdge('tools', 'agent')
      .compile({ checkpointer: new MemorySaver() });
  }

  it.each([
    ['approved', true],
    ['denied', false],
  ])('%s: the call the interrupt() names waits, and the answer continues the same run', async (_name, approve) => {
    const ran: string[] = [];
    const lg = langGraphMirror({ approvals: true, logger: false });
    const graph = reviewGraph(lg, ran);
    await lg.run(graph, ask, thread('v'));
    expect(lg.mirror.approvals.pending).toEqual([{ callId: 'c2', name: 'deploy', input: { target: 'prod' } }]);
    expect(ran).toEqual([]);
    const next = lg.answered();
    if (approve) lg.mirror.approvals.approve('c2');
    else lg.mirror.approvals.deny('c2', 'not today');
    const out = await lg.run(graph, (await next)!, thread('v'));
    expect(ran).toEqual(approve ? ['ls', 'deploy prod'] : []);
    expect(out.messages.at(-1)?.content).toBe(
      approve ? 'done: a b | deployed' : 'done: denied: not today | denied: not today',
    );
    expect(lg.result).toMatchObject({ outcome: 'end_of_turn', turn: 1 });
    expectBodiesOnce(2);
  });

  it("a node that makes a model call before its interrupt() and is re-run on resume is answered with the call's response, not sent again", async () => {
    const ran: string[] = [];
    const lg = langGraphMirror({ approvals: true, logger: false });
    const graph = reviewGraph(lg, ran, true);
    await lg.run(graph, ask, thread('m'));
    expect(server.exchanges).toHaveLength(2);
    expect(lg.usage.llmCalls).toBe(2);
    const next = lg.answered();
    lg.mirror.approvals.approve('c2');
    await lg.run(graph, (await next)!, thread('m'));
    expect(ran).toEqual(['ls', 'deploy prod']);
    expect(lg.result).toMatchObject({ outcome: 'end_of_turn', turn: 1 });
    expect(lg.usage.llmCalls).toBe(3);
    expectBodiesOnce(3);
  });

  it("killed while parked after its answer, the run resumed from its journal lines alone serves the re-run node's repeated call from the journal", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-lgagain-'));
    try {
      // The first process: parks at the review node's interrupt(), is approved (an `approval`
      // line), and dies before it continues. Nothing of it survives but its journal file.
      const file = path.join(dir, 'first.jsonl');
      const sink = JsonlHistorySink.open(file, { runId: 'r' });
      const first = langGraphMirror({ approvals: true, logger: false, sink, journal: true });
      await first.run(reviewGraph(first, [], true), ask, thread('k'));
      const next = first.answered();
      first.mirror.approvals.approve('c2');
      expect(await next).toBeInstanceOf(Command);
      sink.close();
      const journal = [...(await loadHistory(file)).journal] as unknown as RecordedLine[];
      expect(journal.filter((l) => l.type === 'llm')).toHaveLength(2);
      const summary = (journal.filter((l) => l.type === 'llm')[1]!.response as { toolCalls: unknown }).toolCalls;
      expect(server.exchanges).toHaveLength(2);

      // Another mirror, another graph and checkpointer: the journal serves both calls, the
      // answer is taken from it, and the continuation's repeated call is answered by the
      // mirror's journal path (`recordedResponse({ again })`), not sent. Neither tool had started
      // (the review node parks before the tools node): both run.
      const ran: string[] = [];
      const lg = langGraphMirror({
        approvals: true,
        logger: false,
        resumeFrom: { journal },
        resumeTools: { rerun: ['ls', 'deploy'] },
      });
      const graph = reviewGraph(lg, ran, true);
      const served = jest.spyOn(lg.mirror, 'recordedResponse');
      await lg.run(graph, ask, thread('k2'));
      expect(lg.mirror.approvals.waiting).toBe(false);
      const command = await lg.answered();
      expect(command!.resume).toEqual({ approved: true });
      await lg.run(graph, command!, thread('k2'));
      const again = served.mock.calls.findIndex(([options]) => options?.again !== undefined);
      expect(served.mock.calls[again]).toEqual([{ again: 2 }]);
      expect(served.mock.results[again]!.value).toMatchObject({ toolCalls: summary });
      expect(ran).toEqual(['ls', 'deploy prod']);
      expect(lg.result).toMatchObject({ outcome: 'end_of_turn', turn: 1 });
      expect(lg.mirror.resumed).toMatchObject({ mode: 'recovered', recordedCalls: 2 });
      // Two served (charged from the journal, no earlier usage given), the repeat not again, one live.
      expect(lg.usage.llmCalls).toBe(3);
      expectBodiesOnce(3);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses by name an interrupt() whose value names no tool call: the run ends in Error', async () => {
    const lg = langGraphMirror({ approvals: true, logger: false });
    const graph = new StateGraph(MessagesAnnotation)
      .addNode('ask', async () => (interrupt('continue?'), { messages: [] }))
      .addEdge(START, 'ask')
      .compile({ checkpointer: new MemorySaver() });
    await lg.run(graph, ask, thread('x'));
    expect(lg.result).toMatchObject({ outcome: 'error' });
    expect(lg.result?.error?.message).toMatch(/interrupt\(\) value.*a LangChain tool call.*got `continue\?`/);
  });
});

describe('killed after its answer, a run resumed from its journal takes the answer and follows the tool policy', () => {
  it.each([
    ['approved, the default policy: the deploy may have run, so it is answered interrupted', 'approve', undefined],
    ["approved, policy rerun: ['deploy']: the deploy runs", 'approve', { rerun: ['deploy'] }],
    ['denied: the deploy reads the denial, nothing runs', 'deny', undefined],
  ] as const)('%s', async (_name, answer, tools) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-lganswered-'));
    try {
      // The first process: deploy asks inside itself and parks; answered (an `approval` line), it dies.
      const file = path.join(dir, 'first.jsonl');
      const sink = JsonlHistorySink.open(file, { runId: 'r' });
      const first = langGraphMirror({ approvals: true, logger: false, sink, journal: true });
      const firstRan: string[] = [];
      await first.run(agentOf(first, firstRan), ask, thread('a'));
      const next = first.answered();
      if (answer === 'approve') first.mirror.approvals.approve('c2');
      else first.mirror.approvals.deny('c2', 'not today');
      expect(await next).toBeInstanceOf(Command);
      sink.close();
      expect(firstRan).toEqual(['ls']);
      const journal = [...(await loadHistory(file)).journal] as unknown as RecordedLine[];
      // The question deploy asked inside itself (written before the run parked), then its answer.
      expect(journal.filter((l) => l.type === 'approval').map((l) => ('asked' in l ? 'asked' : 'answered'))).toEqual([
        'asked',
        'answered',
      ]);

      // Resumed on a fresh graph and checkpointer, with no `rerun` asked for the tool that asks.
      const ran: string[] = [];
      const lg = langGraphMirror({
        approvals: true,
        logger: false,
        resumeFrom: { journal },
        ...(tools === undefined ? {} : { resumeTools: tools }),
      });
      let asked = 0;
      lg.mirror.approvals.listen(() => (asked += 1));
      const agent = agentOf(lg, ran);
      await lg.run(agent, ask, thread('a2'));
      // The deploy asked again, and its wait took the journaled answer: nobody was asked.
      expect(lg.machine.current as string).toBe('RunningTool');
      expect(lg.mirror.approvals.waiting).toBe(false);
      expect(asked).toBe(0);
      const parked = lg.machine.history().find((r) => (r.to as string) === 'AwaitingApproval')!;
      expect(parked.data).toMatchObject({ fromJournal: ['c2'] });
      const command = await lg.answered();
      expect(command!.resume).toEqual(
        answer === 'approve' ? { approved: true } : { approved: false, reason: 'not today' },
      );
      const out = await lg.run(agent, command!, thread('a2'));
      const last = String(out.messages.at(-1)?.content);
      if (answer === 'deny') expect(last).toBe('done: a b | denied: not today');
      else if (tools === undefined) expect(last).toMatch(/^done: a b \| .*interrupted: the run was cut off/);
      else expect(last).toBe('done: a b | deployed');
      // ls served from the journal; deploy ran only under rerun.
      expect(ran).toEqual(answer === 'approve' && tools !== undefined ? ['deploy prod'] : []);
      expect(lg.result).toMatchObject({ outcome: 'end_of_turn', turn: 1 });
      expect(lg.mirror.resumed).toMatchObject({ mode: 'recovered', recordedCalls: 1, servedTools: 1 });
      expectBodiesOnce(2);
      expect(validateHistory(lg.machine.history(), lg.machine.table)).toMatchObject({ ok: true, issues: [] });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('killed while parked and unanswered, a run resumed from its journal with no tool policy asks again', () => {
  it.each([
    ['approved once parked again: the deploy runs once', 'approve'],
    ['denied once parked again: the deploy never runs', 'deny'],
  ] as const)('%s', async (_name, answer) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-lgasked-'));
    try {
      // The first process: deploy asks inside itself and parks; it dies before anyone answers.
      const file = path.join(dir, 'first.jsonl');
      const sink = JsonlHistorySink.open(file, { runId: 'r' });
      const first = langGraphMirror({ approvals: true, logger: false, sink, journal: true });
      const firstRan: string[] = [];
      await first.run(agentOf(first, firstRan), ask, thread('u'));
      expect(first.mirror.approvals.pending.map((p) => p.callId)).toEqual(['c2']);
      sink.close();
      const journal = [...(await loadHistory(file)).journal] as unknown as RecordedLine[];
      expect(journal.filter((l) => l.type === 'approval')).toEqual([
        expect.objectContaining({ callId: 'c2', name: 'deploy', input: { target: 'prod' }, asked: true }),
      ]);

      // Resumed on a fresh graph and checkpointer, no `rerun`: deploy runs again to its question,
      // and the run parks again with the same call; its file says so again, for a second cut.
      const second = path.join(dir, 'second.jsonl');
      const sink2 = JsonlHistorySink.open(second, { runId: 'r' });
      const ran: string[] = [];
      const lg = langGraphMirror({
        approvals: true,
        logger: false,
        sink: sink2,
        journal: true,
        resumeFrom: { journal },
      });
      let asked = 0;
      lg.mirror.approvals.listen(() => (asked += 1));
      const agent = agentOf(lg, ran);
      await lg.run(agent, ask, thread('u2'));
      expect(lg.machine.current as string).toBe('AwaitingApproval');
      expect(lg.mirror.approvals.pending).toEqual([{ callId: 'c2', name: 'deploy', input: { target: 'prod' } }]);
      expect(asked).toBe(1);
      expect(ran).toEqual([]);
      const next = lg.answered();
      if (answer === 'approve') lg.mirror.approvals.approve('c2');
      else lg.mirror.approvals.deny('c2', 'not today');
      const out = await lg.run(agent, (await next)!, thread('u2'));
      sink2.close();
      const last = String(out.messages.at(-1)?.content);
      expect(last).toBe(answer === 'approve' ? 'done: a b | deployed' : 'done: a b | denied: not today');
      expect(ran).toEqual(answer === 'approve' ? ['deploy prod'] : []);
      expect(lg.result).toMatchObject({ outcome: 'end_of_turn', turn: 1 });
      expect(lg.mirror.resumed).toMatchObject({
        mode: 'recovered',
        recordedCalls: 1,
        servedTools: 1,
        interruptedTools: 0,
      });
      expectBodiesOnce(2);
      const again = (await loadHistory(second)).journal.filter((l) => l.type === 'approval');
      expect(again.map((l) => ('asked' in l ? 'asked' : 'answered'))).toEqual(['asked', 'answered']);
      expect(validateHistory(lg.machine.history(), lg.machine.table)).toMatchObject({ ok: true, issues: [] });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
