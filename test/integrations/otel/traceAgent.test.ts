import { SpanKind, SpanStatusCode, trace, type Tracer } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import {
  AgentWithStateMachine,
  createScriptedAgent,
  InvalidArgumentError,
  type AgentScript,
  type AgentWithStateMachineOptions,
  type TransitionRecord,
} from 'agent-state-machine';
import { historyToOtlp } from 'agent-state-machine/report';
import { traceAgent, traceBatch } from '../../../lib/integrations/otel';
import { manualClock } from '../../helpers/manualClock';
import { threeFiguresTask, THREE_FIGURES } from '../../helpers/threeFigures';

function setup(): { exporter: InMemorySpanExporter; provider: BasicTracerProvider } {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return { exporter, provider };
}

/** A scripted agent under a clock that moves only when something waits, traced into an in-memory exporter. */
function tracedAgent(
  script: Omit<AgentScript, 'sleep'>,
  options: Partial<AgentWithStateMachineOptions> = {},
  trace: Parameters<typeof traceAgent>[1] = {},
) {
  const { exporter, provider } = setup();
  const clock = manualClock();
  const sleep = async (ms: number): Promise<void> => void clock.advance(ms);
  const records: TransitionRecord<string>[] = [];
  const agent = new AgentWithStateMachine(createScriptedAgent({ ...script, sleep }), {
    clock: clock.now,
    sleep,
    random: () => 0,
    logger: false,
    sink: { write: (r) => void records.push(r) },
    ...options,
  });
  const stop = traceAgent(agent, {
    tracer: provider.getTracer('test'),
    agentName: 'helper',
    providerName: 'openai',
    ...trace,
  });
  return { agent, exporter, stop, records, clock };
}

/** The finished spans in start order, as "name [kind] < parent". */
function tree(spans: ReadableSpan[]): string[] {
  const byId = new Map(spans.map((s) => [s.spanContext().spanId, s]));
  return sorted(spans).map((s) => {
    const parent = s.parentSpanContext?.spanId;
    return `${s.name} [${SpanKind[s.kind]}]${parent === undefined ? '' : ` < ${byId.get(parent)?.name ?? 'outside'}`}`;
  });
}

function sorted(spans: ReadableSpan[]): ReadableSpan[] {
  const ns = (s: ReadableSpan): number => s.startTime[0] * 1e9 + s.startTime[1];
  return [...spans].sort(
    (a, b) => ns(a) - ns(b) || (a.name.startsWith('invoke') ? -1 : b.name.startsWith('invoke') ? 1 : 0),
  );
}

function named(spans: ReadableSpan[], prefix: string): ReadableSpan[] {
  return sorted(spans).filter((s) => s.name.startsWith(prefix));
}

describe('traceAgent()', () => {
  it('traceAgent() makes a text turn an invoke_agent span with a chat CLIENT child, usage and moves as events', async () => {
    const { agent, exporter } = tracedAgent({
      replies: [
        { text: 'hi', usage: { inputTokens: 12, outputTokens: 4, cachedInputTokens: 8, costUsd: 0.003 }, delayMs: 250 },
      ],
    });
    const result = await agent.runTurn('hello');
    expect(result.outcome).toBe('end_of_turn');
    const spans = exporter.getFinishedSpans();
    expect(tree(spans)).toEqual(['invoke_agent helper [INTERNAL]', 'chat [CLIENT] < invoke_agent helper']);
    const [turn, chat] = sorted(spans) as [ReadableSpan, ReadableSpan];
    expect(chat.spanContext().traceId).toBe(turn.spanContext().traceId);
    expect(turn.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.provider.name': 'openai',
      'gen_ai.agent.name': 'helper',
      'gen_ai.usage.input_tokens': 12,
      'gen_ai.usage.output_tokens': 4,
      'agent_state_machine.usage.cost_usd': 0.003,
      'agent_state_machine.outcome': 'end_of_turn',
    });
    expect(turn.attributes['error.type']).toBeUndefined();
    expect(turn.status.code).toBe(SpanStatusCode.UNSET);
    expect(
      turn.events.map(
        (e) =>
          `${String(e.attributes!['agent_state_machine.transition.from'])}>${String(e.attributes!['agent_state_machine.transition.to'])}`,
      ),
    ).toEqual([
      'Ready>WaitingForUserInput',
      'WaitingForUserInput>SendingToLLM',
      'SendingToLLM>ProcessingLLMResponse',
      'ProcessingLLMResponse>EndOfTurn',
    ]);
    expect(
      turn.events.every(
        (e) =>
          e.name === 'agent_state_machine.transition' &&
          e.attributes!['agent_state_machine.transition.forced'] === false,
      ),
    ).toBe(true);
    expect(chat.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.usage.input_tokens': 12,
      'gen_ai.usage.cache_read.input_tokens': 8,
      'agent_state_machine.llm.billed_usd': 0.003,
      'agent_state_machine.llm.cost_source': 'provider',
      'agent_state_machine.llm.attempt': 1,
    });
    expect(chat.duration).toEqual([0, 250_000_000]);
    // Content stays out unless asked for.
    expect(Object.keys(turn.attributes).filter((k) => k.includes('messages'))).toEqual([]);
    expect(Object.keys(chat.attributes).filter((k) => k.includes('messages'))).toEqual([]);
  });

  it('traceAgent() gives parallel tool calls their own execute_tool spans under the turn, overlapping in time', async () => {
    let running = 0;
    let most = 0;
    // Each tool yields to the event loop while it runs: run one at a time, `most` stays 1.
    const tool = (result: { output: string; isError?: boolean }) => async (call: { id: string }) => {
      running += 1;
      most = Math.max(most, running);
      await new Promise((resolve) => setImmediate(resolve));
      running -= 1;
      return { callId: call.id, ...result };
    };
    const { agent, exporter } = tracedAgent(
      {
        replies: [
          {
            raw: {
              toolCalls: [
                { id: 'c1', name: 'read', input: { path: 'a' } },
                { id: 'c2', name: 'grep', input: { q: 'x' } },
              ],
              model: 'gpt-test',
              finishReason: 'tool_calls',
            },
          },
          { text: 'done' },
        ],
        tools: { read: tool({ output: 'A' }), grep: tool({ output: 'no match', isError: true }) },
      },
      { toolConcurrency: 2 },
    );
    await agent.runTurn('look');
    expect(most).toBe(2);
    const spans = exporter.getFinishedSpans();
    const tools = named(spans, 'execute_tool');
    expect(tools.map((s) => s.name).sort()).toEqual(['execute_tool grep', 'execute_tool read']);
    const turn = named(spans, 'invoke_agent')[0]!;
    for (const tool of tools) {
      expect(tool.kind).toBe(SpanKind.INTERNAL);
      expect(tool.parentSpanContext?.spanId).toBe(turn.spanContext().spanId);
    }
    const read = tools.find((s) => s.name === 'execute_tool read')!;
    const grep = tools.find((s) => s.name === 'execute_tool grep')!;
    expect(read.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'read',
      'gen_ai.tool.call.id': 'c1',
      'agent_state_machine.tool.status': 'ok',
    });
    expect(read.attributes['gen_ai.tool.call.arguments']).toBeUndefined();
    expect(grep.attributes).toMatchObject({ 'error.type': 'tool_error', 'agent_state_machine.tool.status': 'error' });
    expect(grep.status).toEqual({ code: SpanStatusCode.ERROR, message: 'no match' });
    // Both started before either ended: they ran at once.
    expect(read.startTime).toEqual(grep.startTime);
    expect(read.endTime).toEqual(grep.endTime);
    const chats = named(spans, 'chat');
    expect(chats.map((s) => s.name)).toEqual(['chat gpt-test', 'chat']);
    expect(chats[0]!.attributes).toMatchObject({
      'gen_ai.response.model': 'gpt-test',
      'gen_ai.response.finish_reasons': ['tool_calls'],
      'agent_state_machine.llm.operation': 'sendUserMessage',
    });
    expect(chats[1]!.attributes['agent_state_machine.llm.operation']).toBe('sendToolResults');
  });

  it('traceAgent() gives each attempt of a retried LLM call its own chat span, the failed one an error', async () => {
    const { agent, exporter } = tracedAgent({ replies: [{ error: 'connection reset' }, { text: 'ok' }] });
    const result = await agent.runTurn('go');
    expect(result.outcome).toBe('end_of_turn');
    const chats = named(exporter.getFinishedSpans(), 'chat');
    expect(chats).toHaveLength(2);
    expect(chats[0]!.attributes).toMatchObject({
      'agent_state_machine.llm.attempt': 1,
      'agent_state_machine.llm.will_retry': true,
      'error.type': 'Error',
    });
    expect(chats[0]!.status).toEqual({ code: SpanStatusCode.ERROR, message: 'connection reset' });
    expect(chats[0]!.events.map((e) => e.name)).toEqual(['exception']);
    expect(chats[1]!.attributes).toMatchObject({ 'agent_state_machine.llm.attempt': 2 });
    expect(chats[1]!.status.code).toBe(SpanStatusCode.UNSET);
    expect(named(exporter.getFinishedSpans(), 'invoke_agent')[0]!.status.code).toBe(SpanStatusCode.UNSET);
  });

  it("traceAgent() names a failed attempt's error.type by the HTTP status an SDK error carries", async () => {
    const { exporter, provider } = setup();
    let calls = 0;
    const loop = {
      sendUserMessage: async () => {
        calls += 1;
        if (calls === 1) throw Object.assign(new Error('Rate limit reached'), { name: 'RateLimitError', status: 429 });
        return { text: 'ok', model: 'gpt-4.1-2025-04-14', finishReason: 'stop' };
      },
      sendToolResults: async () => ({ text: 'unused' }),
      runTool: async (call: { id: string }) => ({ callId: call.id, output: '' }),
    };
    const agent = new AgentWithStateMachine(loop, { logger: false, sleep: async () => undefined, random: () => 0 });
    traceAgent(agent, { tracer: provider.getTracer('t'), providerName: 'openai', model: 'gpt-4.1' });
    await agent.runTurn('hi');
    const chats = named(exporter.getFinishedSpans(), 'chat');
    expect(chats.map((s) => s.name)).toEqual(['chat gpt-4.1', 'chat gpt-4.1']);
    expect(chats[0]!.attributes['error.type']).toBe('429');
    expect(chats[1]!.attributes).toMatchObject({
      'gen_ai.request.model': 'gpt-4.1',
      'gen_ai.response.model': 'gpt-4.1-2025-04-14',
      'gen_ai.response.finish_reasons': ['stop'],
    });
  });

  it('traceAgent() gives each chat span its figure: a 429 released, a 500 uncertain with why, the answer billed', async () => {
    const { exporter, provider } = setup();
    let calls = 0;
    const loop = {
      llmCallBound: () => ({ inputTokens: 100, maxOutputTokens: 100, model: 'm' }),
      sendUserMessage: async () => {
        calls += 1;
        if (calls === 1) throw Object.assign(new Error('Rate limit reached'), { status: 429 });
        if (calls === 2) throw Object.assign(new Error('The server had an error'), { status: 500 });
        return { text: 'ok', model: 'm', usage: { inputTokens: 10, outputTokens: 10 } };
      },
      sendToolResults: async () => ({ text: 'unused' }),
      runTool: async (call: { id: string }) => ({ callId: call.id, output: '' }),
    };
    const agent = new AgentWithStateMachine(loop, {
      logger: false,
      sleep: async () => undefined,
      random: () => 0,
      pricing: (u) => (u.inputTokens! + u.outputTokens!) * 1e-5,
      retry: { retries: 2, shouldRetry: () => true },
    });
    traceAgent(agent, { tracer: provider.getTracer('t') });
    await agent.runTurn('hi');
    const chats = named(exporter.getFinishedSpans(), 'chat').map((s) => s.attributes);
    expect(chats[0]).toMatchObject({
      'agent_state_machine.llm.money': 'released',
      'agent_state_machine.llm.released_usd': 0.002,
    });
    expect(chats[0]!['agent_state_machine.llm.money.reason']).toMatch(/^answered 429, not billed: /);
    expect(chats[0]).not.toHaveProperty('agent_state_machine.llm.billed_usd');
    expect(chats[1]).toMatchObject({
      'agent_state_machine.llm.money': 'uncertain',
      'agent_state_machine.llm.uncertain_usd': 0.002,
    });
    expect(chats[1]!['agent_state_machine.llm.money.reason']).toMatch(/may have left \(500 The server had an error\)/);
    expect(chats[1]).not.toHaveProperty('agent_state_machine.llm.billed_usd');
    expect(chats[2]).toMatchObject({
      'agent_state_machine.llm.money': 'billed',
      'agent_state_machine.llm.billed_usd': 0.0002,
      'agent_state_machine.llm.cost_source': 'local',
    });
  });

  it('traceAgent() ends a turn cancelled mid-tool as an error, the running tool interrupted and the forced move marked', async () => {
    let agentRef: AgentWithStateMachine | undefined;
    const { agent, exporter } = tracedAgent({
      replies: [{ toolCalls: [{ id: 'c1', name: 'slow' }] }, { text: 'never' }],
      tools: {
        slow: (_call, ctx) =>
          new Promise((_resolve, reject) => {
            ctx.signal.addEventListener('abort', () => reject(new Error('aborted')));
            agentRef!.cancel('user pressed stop');
          }),
      },
    });
    agentRef = agent;
    const result = await agent.runTurn('work');
    expect(result.outcome).toBe('cancelled');
    const spans = exporter.getFinishedSpans();
    const turn = named(spans, 'invoke_agent')[0]!;
    expect(turn.attributes).toMatchObject({ 'error.type': 'cancelled', 'agent_state_machine.outcome': 'cancelled' });
    expect(turn.status.code).toBe(SpanStatusCode.ERROR);
    expect(turn.status.message).toMatch(/user pressed stop/);
    const forced = turn.events.filter((e) => e.attributes!['agent_state_machine.transition.forced'] === true);
    expect(forced.map((e) => e.attributes!['agent_state_machine.transition.to'])).toEqual(['Cancelled']);
    const tool = named(spans, 'execute_tool')[0]!;
    expect(tool.attributes).toMatchObject({
      'gen_ai.tool.name': 'slow',
      'agent_state_machine.tool.status': 'interrupted',
      'error.type': 'interrupted',
    });
    expect(tool.status.code).toBe(SpanStatusCode.ERROR);
  });

  it('traceAgent() records a budget stop: limits, spend and the stopping limit in our namespace, not_run tools', async () => {
    const { agent, exporter } = tracedAgent(
      {
        replies: [
          { toolCalls: [{ id: 'c1', name: 'read' }], usage: { inputTokens: 5, outputTokens: 5, costUsd: 2 } },
          { text: 'never' },
        ],
        tools: { read: { output: 'x' } },
      },
      { budget: { maxCostUsd: 1, strict: false, maxLlmCalls: 10 } },
    );
    const result = await agent.runTurn('spend');
    expect(result.outcome).toBe('budget_exceeded');
    const spans = exporter.getFinishedSpans();
    const turn = named(spans, 'invoke_agent')[0]!;
    expect(turn.attributes).toMatchObject({
      'error.type': 'budget_exceeded',
      'agent_state_machine.budget.max_cost_usd': 1,
      'agent_state_machine.budget.max_llm_calls': 10,
      'agent_state_machine.budget.spent.cost_usd': 2,
      'agent_state_machine.budget.stopped_by': 'maxCostUsd',
      'agent_state_machine.budget.used': 2,
      'agent_state_machine.budget.max': 1,
    });
    expect(turn.status.code).toBe(SpanStatusCode.ERROR);
    const tools = named(spans, 'execute_tool');
    expect(tools.map((s) => [s.attributes['agent_state_machine.tool.status'], s.attributes['error.type']])).toEqual([
      ['not_run', 'not_run'],
    ]);
  });

  it('traceAgent() records prompts, replies, tool arguments and results only with captureContent', async () => {
    const { agent, exporter } = tracedAgent(
      {
        replies: [{ toolCalls: [{ id: 'c1', name: 'read', input: { path: 'secret.txt' } }] }, { text: 'the answer' }],
        tools: { read: { output: 'file body' } },
      },
      {},
      { captureContent: true },
    );
    await agent.runTurn('what is in secret.txt?');
    const spans = exporter.getFinishedSpans();
    const turn = named(spans, 'invoke_agent')[0]!;
    expect(JSON.parse(turn.attributes['gen_ai.input.messages'] as string)).toEqual([
      { role: 'user', parts: [{ type: 'text', content: 'what is in secret.txt?' }] },
    ]);
    expect(JSON.parse(turn.attributes['gen_ai.output.messages'] as string)).toEqual([
      { role: 'assistant', parts: [{ type: 'text', content: 'the answer' }], finish_reason: 'stop' },
    ]);
    const tool = named(spans, 'execute_tool')[0]!;
    expect(tool.attributes).toMatchObject({
      'gen_ai.tool.call.arguments': '{"path":"secret.txt"}',
      'gen_ai.tool.call.result': 'file body',
    });
    const second = named(spans, 'chat')[1]!;
    expect(JSON.parse(second.attributes['gen_ai.input.messages'] as string)).toEqual([
      { role: 'tool', parts: [{ type: 'tool_call_response', id: 'c1', response: 'file body' }] },
    ]);
  });

  it('traceAgent() stops tracing when its stop function is called', async () => {
    const { agent, exporter, stop } = tracedAgent({ replies: [{ text: 'a' }, { text: 'b' }] });
    await agent.runTurn('one');
    stop();
    stop();
    await agent.runTurn('two');
    expect(named(exporter.getFinishedSpans(), 'invoke_agent')).toHaveLength(1);
  });

  it('traceAgent() and historyToOtlp() draw the same span tree for the same run', async () => {
    const { agent, exporter, records } = tracedAgent({
      replies: [
        { toolCalls: [{ id: 'c1', name: 'read' }], usage: { inputTokens: 3, outputTokens: 2, costUsd: 0.01 } },
        { text: 'done', usage: { inputTokens: 4, outputTokens: 1, costUsd: 0.01 } },
      ],
      tools: { read: { output: 'x', delayMs: 30 } },
    });
    await agent.runTurn('x');
    const live = tree(exporter.getFinishedSpans());
    const spans = historyToOtlp(records, { agentName: 'helper', providerName: 'openai' }).resourceSpans[0]!
      .scopeSpans[0]!.spans;
    const byId = new Map(spans.map((s) => [s.spanId, s]));
    const kinds: Record<number, string> = { 1: 'INTERNAL', 3: 'CLIENT' };
    expect(
      spans.map(
        (s) =>
          `${s.name} [${kinds[s.kind]!}]${s.parentSpanId === undefined ? '' : ` < ${byId.get(s.parentSpanId)!.name}`}`,
      ),
    ).toEqual(live);
  });

  it('traceAgent() uses the globally registered tracer provider when given no tracer', async () => {
    const { exporter, provider } = setup();
    trace.setGlobalTracerProvider(provider);
    try {
      const agent = new AgentWithStateMachine(
        createScriptedAgent({ replies: [{ text: 'hi' }], sleep: async () => undefined }),
        { logger: false },
      );
      traceAgent(agent);
      await agent.runTurn('hello');
      const spans = exporter.getFinishedSpans();
      expect(tree(spans)).toEqual(['invoke_agent [INTERNAL]', 'chat [CLIENT] < invoke_agent']);
      expect(spans[0]!.instrumentationScope.name).toBe('agent-state-machine');
      expect(named(spans, 'invoke_agent')[0]!.attributes['gen_ai.provider.name']).toBe('_OTHER');
    } finally {
      trace.disable();
    }
  });

  it('traceAgent() with a tracer that throws never changes a turn: the adapter reports listenerError', async () => {
    const broken = {
      startSpan: () => {
        throw new Error('exporter down');
      },
      startActiveSpan: () => {
        throw new Error('exporter down');
      },
    } as unknown as Tracer;
    const agent = new AgentWithStateMachine(
      createScriptedAgent({
        replies: [{ toolCalls: [{ id: 'c1', name: 't' }] }, { text: 'ok' }],
        tools: { t: { output: 'x' } },
        sleep: async () => undefined,
      }),
      { logger: false },
    );
    const errors: string[] = [];
    agent.on('listenerError', (error, event) => void errors.push(`${event}: ${(error as Error).message}`));
    traceAgent(agent, { tracer: broken });
    expect((await agent.runTurn('go')).outcome).toBe('end_of_turn');
    expect(errors).toContain('turnStart: exporter down');
  });

  it('traceAgent() rejects what is not an agent, and bad options, naming them', () => {
    expect(() => traceAgent({} as never)).toThrow(InvalidArgumentError);
    const { agent } = tracedAgent({ replies: [] });
    expect(() => traceAgent(agent, { agentName: 7 as never })).toThrow(/options\.agentName/);
    expect(() => traceAgent(agent, { captureContent: 'yes' as never })).toThrow(/options\.captureContent/);
  });
});

describe('traceBatch()', () => {
  it("traceBatch() puts every run's turn under one invoke_workflow span with the batch totals", async () => {
    const { exporter, provider } = setup();
    const clock = manualClock();
    const sleep = async (ms: number): Promise<void> => void clock.advance(ms);
    const report = await traceBatch(
      [
        {
          id: 'a',
          input: 'one',
          agent: createScriptedAgent({
            replies: [{ text: 'A', usage: { inputTokens: 1, outputTokens: 1, costUsd: 0.01 } }],
            sleep,
          }),
        },
        {
          id: 'b',
          input: 'two',
          agent: createScriptedAgent({ replies: [{ error: 'boom' }, { error: 'boom' }, { error: 'boom' }], sleep }),
        },
      ],
      { concurrency: 1, clock: clock.now, sleep, random: () => 0, logger: false },
      { tracer: provider.getTracer('test'), workflowName: 'nightly', agentName: 'fixer' },
    );
    expect(report.runs.map((r) => r.outcome)).toEqual(['end_of_turn', 'error']);
    const spans = exporter.getFinishedSpans();
    const workflow = spans.find((s) => s.name === 'invoke_workflow nightly')!;
    expect(workflow.kind).toBe(SpanKind.INTERNAL);
    expect(workflow.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_workflow',
      'gen_ai.workflow.name': 'nightly',
      'agent_state_machine.batch.runs': 2,
      'agent_state_machine.batch.outcomes.error': 1,
      'error.type': 'run_failed',
    });
    expect(workflow.status.code).toBe(SpanStatusCode.ERROR);
    const turns = spans.filter((s) => s.name === 'invoke_agent fixer');
    expect(turns).toHaveLength(2);
    for (const turn of turns) {
      expect(turn.parentSpanContext?.spanId).toBe(workflow.spanContext().spanId);
      expect(turn.spanContext().traceId).toBe(workflow.spanContext().traceId);
    }
  });

  it('puts the three figures of money apart on the batch span and on each turn span', async () => {
    const { exporter, provider } = setup();
    const report = await traceBatch(
      [threeFiguresTask('m')],
      { logger: false, sleep: async () => undefined, ...THREE_FIGURES, ledger: false },
      { tracer: provider.getTracer('test'), workflowName: 'money' },
    );
    expect(report.totals).toMatchObject({ uncertainUsd: 0.01, releasedUsd: 0.01 });
    const spans = exporter.getFinishedSpans();
    const figures = {
      'agent_state_machine.usage.cost_usd': expect.closeTo(0.0106, 10),
      'agent_state_machine.usage.uncertain_usd': expect.closeTo(0.01, 10),
      'agent_state_machine.usage.released_usd': expect.closeTo(0.01, 10),
    };
    expect(spans.find((s) => s.name === 'invoke_workflow money')!.attributes).toMatchObject(figures);
    expect(spans.find((s) => s.name.startsWith('invoke_agent'))!.attributes).toMatchObject(figures);
  });

  it('counts the calls of unknown cost on the batch span and on each turn span, never as $0 alone', async () => {
    const { exporter, provider } = setup();
    // No pricing and no cap: each answered call's cost is unknown.
    const agent = () =>
      createScriptedAgent({
        sleep: async () => undefined,
        replies: [{ text: 'ok', usage: { inputTokens: 10, outputTokens: 5 }, model: 'm1' }],
      });
    const report = await traceBatch(
      [
        { id: 'a', input: 'go', agent },
        { id: 'b', input: 'go', agent },
      ],
      { logger: false },
      { tracer: provider.getTracer('test'), workflowName: 'unpriced' },
    );
    expect(report.totals).toMatchObject({ costUsd: 0, unpricedCalls: 2 });
    const spans = exporter.getFinishedSpans();
    expect(spans.find((s) => s.name === 'invoke_workflow unpriced')!.attributes).toMatchObject({
      'agent_state_machine.usage.cost_usd': 0,
      'agent_state_machine.usage.unpriced_calls': 2,
    });
    const turns = spans.filter((s) => s.name.startsWith('invoke_agent'));
    expect(turns.map((t) => t.attributes['agent_state_machine.usage.unpriced_calls'])).toEqual([1, 1]);
  });
});
