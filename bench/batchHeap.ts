// The heap a batch holds: 10,000 zero-latency runs (one tool call, then text) at concurrency
// 16 with `historyDir` (durability 'none'), heap used after a full GC before and after the
// batch (the report still held), and the largest heap seen at the end of any run (garbage
// included: V8 collects when it likes). Not part of `npm run bench`; docs/batches.md quotes it.
//
//   node --expose-gc --import tsx bench/batchHeap.ts
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runBatch, type AgentLoop, type LLMResponse } from '../lib/index';
import { failed } from './harness';

const RUNS = 10_000;
const TOOL: LLMResponse = {
  toolCalls: [{ id: 'c1', name: 'list_files', input: { dir: '.' } }],
  usage: { inputTokens: 800, outputTokens: 30, costUsd: 0.003 },
};
const TEXT: LLMResponse = { text: 'done', usage: { inputTokens: 900, outputTokens: 25, costUsd: 0.003 } };
const agent = (): AgentLoop => ({
  sendUserMessage: async () => TOOL,
  sendToolResults: async () => TEXT,
  runTool: async (c) => ({ callId: c.id, output: 'README.md' }),
});
const mib = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(1)} MiB`;

async function main(): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('run with node --expose-gc --import tsx bench/batchHeap.ts');
  gc();
  const before = process.memoryUsage().heapUsed;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'asm-bench-heap-'));
  let peak = 0;
  try {
    const tasks = Array.from({ length: RUNS }, (_, i) => ({ id: `task-${i}`, input: 'go', agent }));
    const report = await runBatch(tasks, {
      concurrency: 16,
      historyDir: dir,
      // The moves alone, as this figure has always been taken (a folder now means journal and ledger by default).
      journal: false,
      ledger: false,
      historyDurability: 'none',
      onRun: () => void (peak = Math.max(peak, process.memoryUsage().heapUsed)),
    });
    gc();
    const after = process.memoryUsage().heapUsed;
    console.log(
      `${report.runs.length} runs: heap after GC ${mib(before)} → ${mib(after)} with the report held (+${mib(after - before)}); largest heap at a run's end ${mib(peak)}`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch(failed);
