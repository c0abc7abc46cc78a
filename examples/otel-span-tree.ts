/**
 * `npm run example:otel`: one traced turn of a scripted coding agent — the LLM asks for two
 * tools at once, the first LLM attempt fails and is retried — and the span tree the
 * OpenTelemetry SDK received, as a tracing tool would show it: `invoke_agent` with its `chat`
 * and `execute_tool` children, their attributes and the machine's moves as span events.
 * Offline, no keys, no collector: the spans go to the SDK's in-memory exporter. To send them
 * to a collector instead, see the README's "Trace with OpenTelemetry".
 */
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import { AgentWithStateMachine, createScriptedAgent } from '../lib/index';
import { traceAgent } from '../lib/integrations/otel/index';

/** Runs the demo turn and returns the finished spans. `print` receives the tree, line by line. */
export async function runOtelExample(print: (line: string) => void = console.log): Promise<ReadableSpan[]> {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  // Virtual time: a wait ends when every earlier one has, without really waiting, so the
  // two tools that run at once overlap on the timeline as they would for real.
  let t = Date.UTC(2026, 0, 1, 9, 0, 0);
  const clock = (): number => t;
  const waiting: Array<{ at: number; wake: () => void }> = [];
  const sleep = (ms: number): Promise<void> =>
    new Promise((wake) => {
      waiting.push({ at: t + ms, wake });
      setImmediate(() => {
        waiting.sort((a, b) => a.at - b.at);
        const next = waiting.shift();
        if (next === undefined) return;
        t = Math.max(t, next.at);
        next.wake();
      });
    });

  const loop = createScriptedAgent({
    sleep,
    replies: [
      { error: 'connection reset by peer', delayMs: 120 },
      {
        delayMs: 900,
        toolCalls: [
          { id: 'call_1', name: 'read_file', input: { path: 'src/sum.ts' } },
          { id: 'call_2', name: 'run_tests', input: { filter: 'sum' } },
        ],
        usage: { inputTokens: 1200, outputTokens: 80, costUsd: 0.0042 },
      },
      {
        delayMs: 700,
        text: 'The sum test fails because of an off-by-one; fixed.',
        usage: { inputTokens: 1500, outputTokens: 40, costUsd: 0.0049 },
      },
    ],
    tools: {
      read_file: { output: 'export const sum = …', delayMs: 15 },
      run_tests: { output: '1 failed', isError: true, delayMs: 2400 },
    },
  });
  const agent = new AgentWithStateMachine(loop, {
    clock,
    sleep,
    random: () => 0,
    logger: false,
    budget: { maxCostUsd: 0.5, strict: false }, // a plain cap: the scripted loop bounds no call
    toolConcurrency: 2,
  } as ConstructorParameters<typeof AgentWithStateMachine>[1]);
  const stop = traceAgent(agent, {
    tracer: provider.getTracer('example'),
    agentName: 'code-fixer',
    providerName: 'openai',
    model: 'gpt-4.1',
  });
  await agent.runTurn('Why does the sum test fail?');
  stop();
  await provider.forceFlush();
  const spans = exporter.getFinishedSpans(); // before shutdown, which empties the in-memory exporter
  await provider.shutdown();
  printTree(spans, print);
  return spans;
}

function printTree(spans: ReadableSpan[], print: (line: string) => void): void {
  const children = new Map<string | undefined, ReadableSpan[]>();
  for (const s of spans) {
    const parent = s.parentSpanContext?.spanId;
    children.set(parent, [...(children.get(parent) ?? []), s]);
  }
  const ms = (s: ReadableSpan): number => s.startTime[0] * 1000 + s.startTime[1] / 1e6;
  const t0 = Math.min(...spans.map(ms));
  const walk = (parent: string | undefined, depth: number): void => {
    for (const s of (children.get(parent) ?? []).sort((a, b) => ms(a) - ms(b))) {
      const duration = s.duration[0] * 1000 + s.duration[1] / 1e6;
      const status = s.status.code === SpanStatusCode.ERROR ? `  ERROR: ${s.status.message ?? ''}` : '';
      print(`${'  '.repeat(depth)}${s.name}  [${SpanKind[s.kind]}]  +${ms(s) - t0} ms, ${duration} ms${status}`);
      for (const [k, v] of Object.entries(s.attributes)) print(`${'  '.repeat(depth + 2)}${k} = ${JSON.stringify(v)}`);
      for (const e of s.events) {
        const a = e.attributes ?? {};
        const what =
          e.name === 'agent_state_machine.transition'
            ? `${String(a['agent_state_machine.transition.from'])} → ${String(a['agent_state_machine.transition.to'])}${a['agent_state_machine.transition.forced'] === true ? ' (forced)' : ''}`
            : String(a['exception.message'] ?? '');
        print(`${'  '.repeat(depth + 2)}event ${e.name}: ${what}`);
      }
      walk(s.spanContext().spanId, depth + 1);
    }
  };
  walk(undefined, 0);
}

if (require.main === module) {
  runOtelExample().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
