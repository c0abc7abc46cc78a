import fc from 'fast-check';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import {
  AgentWithStateMachine,
  createScriptedAgent,
  type ScriptedReply,
  type TransitionRecord,
} from 'agent-state-machine';
import { historyToOtlp } from 'agent-state-machine/report';
import { traceAgent } from '../../../lib/integrations/otel';
import { manualClock } from '../../helpers/manualClock';
import { otlpShapeProblems } from '../../helpers/otlpShape';

const usageArb = fc.record({
  inputTokens: fc.nat(500),
  outputTokens: fc.nat(500),
  costUsd: fc.integer({ min: 0, max: 30 }).map((c) => c / 100),
});
const replyArb: fc.Arbitrary<ScriptedReply> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ text: fc.string(), usage: usageArb }) },
  {
    weight: 5,
    arbitrary: fc
      .record({
        names: fc.array(fc.constantFrom('ok', 'fail', 'cancel', 'slow'), { minLength: 1, maxLength: 3 }),
        usage: usageArb,
      })
      .map(({ names, usage }) => ({
        usage,
        toolCalls: names.map((name, i) => ({ id: `call-${i}`, name })),
      })),
  },
  { weight: 1, arbitrary: fc.constant({ error: 'transient LLM failure' }) },
);
const budgetArb = fc.option(
  fc
    .record(
      {
        maxCostUsd: fc.integer({ min: 0, max: 100 }).map((c) => c / 100),
        maxToolCalls: fc.nat(6),
        maxLlmCalls: fc.nat(8),
      },
      { requiredKeys: [] },
      // Loops without llmCallBound: the dollar cap is the plain one, passed by at most one response.
    )
    .map((b) => (b.maxCostUsd === undefined ? b : { ...b, strict: false })),
  { nil: undefined },
);

/** Tool spans as "name status", sorted: what both views must agree on. */
function toolsOf(names: Array<[string, unknown]>): string[] {
  return names.map(([n, s]) => `${n} ${String(s)}`).sort();
}

describe('traceAgent() with random scripted agents (property-based)', () => {
  it('traceAgent() ends one turn span per turn with the outcome, parents every other span on a turn of its trace, and agrees with the history export', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(replyArb, { maxLength: 10 }),
        budgetArb,
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 1, max: 3 }),
        async (replies, budget, turns, toolConcurrency) => {
          const exporter = new InMemorySpanExporter();
          const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
          const clock = manualClock();
          const sleep = async (ms: number): Promise<void> => void clock.advance(ms);
          const records: TransitionRecord<string>[] = [];
          let agent: AgentWithStateMachine | undefined;
          const loop = createScriptedAgent({
            replies,
            sleep,
            tools: {
              ok: { output: 'fine', delayMs: 10 },
              fail: { error: 'tool broke', delayMs: 5 },
              slow: { output: 'late', delayMs: 700 },
              cancel: () => {
                agent!.cancel('stop pressed');
                return 'cancelled it';
              },
            },
          });
          agent = new AgentWithStateMachine(loop, {
            clock: clock.now,
            sleep,
            random: () => 0,
            logger: false,
            toolConcurrency,
            onUnknownCost: 'ignore',
            sink: { write: (r) => void records.push(r) },
            ...(budget === undefined ? {} : { budget }),
          });
          traceAgent(agent, { tracer: provider.getTracer('p'), agentName: 'p' });
          const outcomes: string[] = [];
          for (let i = 0; i < turns; i++) outcomes.push((await agent.runTurn(`turn ${i}`)).outcome);

          const live = exporter.getFinishedSpans();
          const liveTurns = live.filter((s) => s.name === 'invoke_agent p');
          expect(liveTurns.map((s) => s.attributes['agent_state_machine.outcome'])).toEqual(outcomes);
          expect(liveTurns.map((s) => s.status.code)).toEqual(outcomes.map((o) => (o === 'end_of_turn' ? 0 : 2)));
          const turnIds = new Map(liveTurns.map((s) => [s.spanContext().spanId, s.spanContext().traceId]));
          for (const span of live.filter((s: ReadableSpan) => !s.name.startsWith('invoke_agent'))) {
            expect(turnIds.get(span.parentSpanContext?.spanId ?? '')).toBe(span.spanContext().traceId);
          }

          const otlp = historyToOtlp(records, { agentName: 'p' });
          expect(otlpShapeProblems(otlp)).toEqual([]);
          const fileSpans = otlp.resourceSpans[0]!.scopeSpans[0]!.spans;
          const fileTurns = fileSpans.filter((s) => s.name === 'invoke_agent p');
          const outcomeOf = (s: (typeof fileSpans)[number]): unknown =>
            s.attributes.find((a) => a.key === 'agent_state_machine.outcome')?.value;
          expect(fileTurns.map((s) => (outcomeOf(s) as { stringValue: string }).stringValue)).toEqual(outcomes);
          const fileTurnIds = new Map(fileTurns.map((s) => [s.spanId, s.traceId]));
          for (const span of fileSpans.filter((s) => !s.name.startsWith('invoke_agent')))
            expect(fileTurnIds.get(span.parentSpanId ?? '')).toBe(span.traceId);
          // The same tool calls, with the same status, live and from the file.
          const liveTools = toolsOf(
            live
              .filter((s) => s.name.startsWith('execute_tool'))
              .map((s) => [s.name, s.attributes['agent_state_machine.tool.status']]),
          );
          const fileTools = toolsOf(
            fileSpans
              .filter((s) => s.name.startsWith('execute_tool'))
              .map((s) => [
                s.name,
                (
                  s.attributes.find((a) => a.key === 'agent_state_machine.tool.status')!.value as {
                    stringValue: string;
                  }
                ).stringValue,
              ]),
          );
          expect(fileTools).toEqual(liveTools);
        },
      ),
      { numRuns: 150 },
    );
  });
});
