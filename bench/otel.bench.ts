// What live tracing costs per turn: the same scripted tool-use turn (12 moves, 2 LLM calls,
// 1 tool call) run untraced and traced by `traceAgent` into the SDK's in-memory exporter
// through a SimpleSpanProcessor (so span export is included; a BatchSpanProcessor defers it).
// Untraced and traced samples alternate in one process, so load hits both alike; each sample
// is the mean over a batch of turns; the figures are medians with min–max over the samples.
//
//   npm run bench -- otel            through the runner
//   npx tsx bench/otel.bench.ts      alone (lib/ through tsx)
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { AgentWithStateMachine, createScriptedAgent, type ScriptedReply } from '../lib/index';
import { traceAgent } from '../lib/integrations/otel/index';
import { scaled } from './harness';

const TURNS = scaled(2000, 500);
const SAMPLES = scaled(9, 5);

async function sample(traced: boolean): Promise<number> {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const replies: ScriptedReply[] = [];
  for (let i = 0; i < TURNS; i++) {
    replies.push(
      { toolCalls: [{ id: 'c1', name: 'ls' }], usage: { inputTokens: 100, outputTokens: 10, costUsd: 0.001 } },
      { text: 'done', usage: { inputTokens: 120, outputTokens: 5, costUsd: 0.001 } },
    );
  }
  const agent = new AgentWithStateMachine(
    createScriptedAgent({ replies, tools: { ls: { output: 'a b c' } }, sleep: async () => undefined }),
    { logger: false },
  );
  if (traced) traceAgent(agent, { tracer: provider.getTracer('bench'), agentName: 'bench' });
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < TURNS; i++) {
    await agent.runTurn('go');
    if (i % 100 === 99) exporter.reset(); // keep the exporter's memory flat
  }
  return Number(process.hrtime.bigint() - t0) / 1e3 / TURNS;
}

export async function run(): Promise<void> {
  await sample(false);
  await sample(true);
  const plain: number[] = [];
  const traced: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    plain.push(await sample(false));
    traced.push(await sample(true));
  }
  const med = (a: number[]): number => [...a].sort((x, y) => x - y)[a.length >> 1]!;
  const line = (a: number[]): string =>
    `median ${med(a).toFixed(1)} µs/turn (min ${Math.min(...a).toFixed(1)}, max ${Math.max(...a).toFixed(1)}, ${SAMPLES} samples of ${TURNS} turns)`;
  console.log(`untraced: ${line(plain)}`);
  console.log(`traced:   ${line(traced)}`);
  console.log(`tracing adds ${(med(traced) - med(plain)).toFixed(1)} µs per turn (4 spans, 12 span events)`);
}

if (require.main === module) {
  run().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
