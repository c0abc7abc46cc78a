// Every attribute the span paths emit — the live tracer (traceAgent, traceBatch) and the history
// → OTLP export (historyToOtlp) — keeps to the OpenTelemetry semantic conventions' registry
// (@opentelemetry/semantic-conventions): a name the registry defines, written with its type,
// or a name in our own namespace. The runs cover a tool round trip with content captured, a
// budget stop, and a call whose attempts make the three figures of money (a 429 released, a
// 500 uncertain, an answer billed), in a batch.
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import {
  AgentWithStateMachine,
  createScriptedAgent,
  type AgentLoop,
  type AgentScript,
  type AgentWithStateMachineOptions,
  type TransitionRecord,
} from 'agent-state-machine';
import { historyToOtlp } from 'agent-state-machine/report';
import { traceAgent, traceBatch } from '../../lib/integrations/otel';
import { GEN_AI } from '../../lib/internal/genAiConventions';
import type { OtlpSpan } from '../../lib/telemetry/OtlpJson';
import { conformanceIssue, conformanceIssues, type EmittedAttribute } from '../helpers/conventionConformance';
import { threeFiguresTask, THREE_FIGURES } from '../helpers/threeFigures';

function liveAttributes(spans: readonly ReadableSpan[]): EmittedAttribute[] {
  return spans.flatMap((s) => [
    ...Object.entries(s.attributes).map(([name, value]) => ({ where: `${s.name} (live)`, name, value })),
    ...s.events.flatMap((e) =>
      Object.entries(e.attributes ?? {}).map(([name, value]) => ({
        where: `${s.name}, event ${e.name} (live)`,
        name,
        value,
      })),
    ),
  ]);
}

function exportedAttributes(spans: readonly OtlpSpan[]): EmittedAttribute[] {
  return spans.flatMap((s) => [
    ...s.attributes.map((a) => ({ where: `${s.name} (export)`, name: a.key, value: a.value })),
    ...(s.events ?? []).flatMap((e) =>
      (e.attributes ?? []).map((a) => ({ where: `${s.name}, event ${e.name} (export)`, name: a.key, value: a.value })),
    ),
  ]);
}

/** One turn of `loop`, traced live and recorded; its attributes as both paths emit them. */
async function turnBothWays(
  loop: AgentLoop,
  options: Partial<AgentWithStateMachineOptions>,
): Promise<EmittedAttribute[]> {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const records: TransitionRecord<string>[] = [];
  const agent = new AgentWithStateMachine(loop, {
    logger: false,
    sleep: async () => undefined,
    sink: { write: (r) => void records.push(r) },
    ...options,
  });
  const stop = traceAgent(agent, {
    tracer: provider.getTracer('test'),
    agentName: 'helper',
    providerName: 'openai',
    model: 'gpt-local',
    captureContent: true,
  });
  await agent.runTurn('go').catch(() => undefined);
  stop();
  const exported = historyToOtlp(records, { agentName: 'helper', providerName: 'openai' }).resourceSpans[0]!
    .scopeSpans[0]!.spans;
  expect(exported.length).toBeGreaterThan(1);
  return [...liveAttributes(exporter.getFinishedSpans()), ...exportedAttributes(exported)];
}

const toolRoundTrip = (): AgentScript => ({
  replies: [
    {
      toolCalls: [{ id: 'c1', name: 'read', input: { path: 'a.txt' } }],
      usage: { inputTokens: 10, outputTokens: 5, cachedInputTokens: 4, reasoningTokens: 2, costUsd: 0.25 },
    },
    { text: 'done', usage: { inputTokens: 20, outputTokens: 3, costUsd: 0.5 } },
  ],
  tools: { read: { output: 'A' } },
});

/** Every attribute of the runs below, through both paths, and the batch span's. */
async function everyAttribute(): Promise<EmittedAttribute[]> {
  const tool = await turnBothWays(createScriptedAgent(toolRoundTrip()), {
    budget: { maxCostUsd: 10, strict: false, maxLlmCalls: 10 },
  });
  const stopped = await turnBothWays(createScriptedAgent(toolRoundTrip()), {
    budget: { maxCostUsd: 0.2, strict: false },
  });
  const money = await turnBothWays((threeFiguresTask('m').agent as () => AgentLoop)(), {
    pricing: THREE_FIGURES.pricing!,
    budget: { maxCostUsd: 1, strict: true },
    retry: { retries: 3, shouldRetry: () => true },
  });
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  await traceBatch(
    [threeFiguresTask('m')],
    { logger: false, sleep: async () => undefined, ...THREE_FIGURES, ledger: false },
    { tracer: provider.getTracer('test'), workflowName: 'money', captureContent: true },
  );
  return [...tool, ...stopped, ...money, ...liveAttributes(exporter.getFinishedSpans())];
}

describe('the span paths against the semantic conventions registry', () => {
  it('emit only registry attributes with their registry types, or names in our namespace', async () => {
    const attributes = await everyAttribute();
    const names = new Set(attributes.map((a) => a.name));
    // The runs reach what they are meant to: tools, content, cache and reasoning tokens, money and budgets.
    for (const name of [
      GEN_AI.toolCallArguments,
      GEN_AI.outputMessages,
      GEN_AI.usageCacheReadInputTokens,
      GEN_AI.usageReasoningOutputTokens,
      GEN_AI.workflowName,
      GEN_AI.errorType,
      GEN_AI.exceptionMessage,
      'agent_state_machine.usage.uncertain_usd',
      'agent_state_machine.usage.released_usd',
      'agent_state_machine.llm.billed_usd',
      'agent_state_machine.llm.uncertain_usd',
      'agent_state_machine.llm.released_usd',
      'agent_state_machine.budget.stopped_by',
    ])
      expect(names).toContain(name);
    expect(conformanceIssues(attributes)).toEqual([]);
  });

  it('fails when an attribute is renamed to a name the registry does not have', async () => {
    const conventions = GEN_AI as unknown as Record<string, string>;
    const kept = conventions.usageInputTokens!;
    conventions.usageInputTokens = 'gen_ai.usage.input_token';
    try {
      const issues = conformanceIssues(await everyAttribute());
      expect(issues).toContainEqual(
        expect.stringMatching(/^chat gpt-local \(live\): gen_ai\.usage\.input_token is not in the registry/),
      );
      expect(issues).toContainEqual(
        expect.stringMatching(/\(export\): gen_ai\.usage\.input_token is not in the registry/),
      );
    } finally {
      conventions.usageInputTokens = kept;
    }
  });

  it('fails on a registry name written with another type, and lets our namespace through', () => {
    expect(conformanceIssue({ where: 'chat', name: 'gen_ai.usage.input_tokens', value: 1.5 })).toBe(
      "chat: gen_ai.usage.input_tokens is written as double, the registry's type is int",
    );
    expect(conformanceIssue({ where: 'chat', name: 'gen_ai.usage.input_tokens', value: { doubleValue: 3 } })).toMatch(
      /written as double/,
    );
    expect(conformanceIssue({ where: 'chat', name: 'gen_ai.response.finish_reasons', value: 'stop' })).toMatch(
      /written as string, the registry's type is string\[\]/,
    );
    expect(conformanceIssue({ where: 'chat', name: 'agent_state_machine.anything', value: {} })).toBeUndefined();
    expect(conformanceIssue({ where: 'chat', name: 'asm.cost', value: 1 })).toMatch(/not in the registry/);
    // The proposed cost attribute is not the conventions' until the registry defines it.
    expect(conformanceIssue({ where: 'chat', name: 'gen_ai.usage.cost.amount', value: 0.5 })).toMatch(
      /gen_ai\.usage\.cost\.amount is not in the registry/,
    );
  });
});
