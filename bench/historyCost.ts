// Where a batch's history files go, per run: `runBatch` with `historyDir` and durability
// 'none' (with and without group commit) beside its floors, on tmpfs by default so that the
// disk's noise drops out. Not part of `npm run bench` and sets no target: it explains the
// figures of the `batch` suite's history lines (docs/benchmarks.md, "Where a history file's time goes").
//
// Kinds, alternated sample by sample in one process (500 zero-latency runs per sample, 12
// moves each, concurrency 16):
//   plain           runBatch without historyDir
//   files           files alone, in a loop of their own: open, 13 writes of a 325-byte line, close
//   files 1+1       open, the meta line, the rest in one write, close
//   none            runBatch + historyDir, durability 'none'
//   group none      the same with group commit
//   group, no rec   group commit 'none' with the sink's record writes stubbed out: opening,
//                   the meta line and closing alone
// then, in place, the time of each open(2) and write(2) a 'none' batch makes against the
// same calls in a loop of their own; and writeSync of a line put together from string pieces
// (as the sink made it before it wrote bytes) against a ready-made line of the same size.
//
//   npx tsx bench/historyCost.ts [dir]      default /dev/shm, else the OS temp dir
import type * as FsModule from 'node:fs';
import { createRequire } from 'node:module';
import { closeSync, existsSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AgentLoop, LLMResponse } from '../lib/index';
import { formatNs, median, quantile } from './harness';
import { describeLibrary, loadLibrary } from './library';

const RUNS = 500;
const SAMPLES = 15;
const ROOT_DIR = process.argv[2] ?? (existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir());

const TOOL_REPLY: LLMResponse = {
  toolCalls: [{ id: 'call_1', name: 'list_files', input: { dir: '.' } }],
  usage: { inputTokens: 800, outputTokens: 30, costUsd: 0.003 },
};
const TEXT_REPLY: LLMResponse = { text: 'done', usage: { inputTokens: 900, outputTokens: 25, costUsd: 0.003 } };
const agent = (): AgentLoop => ({
  sendUserMessage: async () => TOOL_REPLY,
  sendToolResults: async () => TEXT_REPLY,
  runTool: async (call) => ({ callId: call.id, output: 'README.md' }),
});

type Kind = 'plain' | 'files' | 'files 1+1' | 'none' | 'group none' | 'group, no rec';
const KINDS: readonly Kind[] = ['plain', 'files', 'files 1+1', 'none', 'group none', 'group, no rec'];
const dirs: string[] = [];

async function once(kind: Kind): Promise<number> {
  const { runBatch, JsonlHistorySink } = loadLibrary();
  const dir = mkdtempSync(path.join(ROOT_DIR, 'asm-history-cost-'));
  dirs.push(dir);
  const tasks = Array.from({ length: RUNS }, (_, i) => ({ id: `task-${i}`, input: 'go', agent }));
  const write = JsonlHistorySink.prototype.write;
  if (kind === 'group, no rec') JsonlHistorySink.prototype.write = () => undefined;
  const t0 = process.hrtime.bigint();
  try {
    if (kind === 'files' || kind === 'files 1+1') {
      const line = `${'x'.repeat(324)}\n`;
      const meta = `${'x'.repeat(1616)}\n`;
      const rest = `${'x'.repeat(2600)}\n`;
      for (let i = 0; i < RUNS; i++) {
        const fd = openSync(path.join(dir, `task-${i}.jsonl`), 'wx');
        if (kind === 'files') for (let l = 0; l < 13; l++) writeSync(fd, line);
        else {
          writeSync(fd, meta);
          writeSync(fd, rest);
        }
        closeSync(fd);
      }
    } else if (kind === 'plain') await runBatch(tasks, { concurrency: 16, logger: false });
    else
      await runBatch(tasks, {
        concurrency: 16,
        logger: false,
        historyDir: dir,
        // The moves alone, beside the floors that write moves (a folder now means journal and ledger by default).
        journal: false,
        ledger: false,
        historyDurability: 'none',
        ...(kind === 'none' ? {} : { historyGroupCommit: true }),
      });
  } finally {
    JsonlHistorySink.prototype.write = write;
  }
  return Number(process.hrtime.bigint() - t0) / 1e3 / RUNS;
}

/** Mean µs of each open(2) and write(2) while `work` runs, timed where they are made. */
async function callsIn(work: () => Promise<unknown>): Promise<{ open: number; write: number }> {
  const fs = createRequire(__filename)('node:fs') as typeof FsModule;
  const real = { openSync: fs.openSync, writeSync: fs.writeSync };
  const spent = { open: { ns: 0, n: 0 }, write: { ns: 0, n: 0 } };
  const timed =
    (name: 'open' | 'write', fn: (...args: never[]) => unknown) =>
    (...args: never[]): unknown => {
      const t = process.hrtime.bigint();
      try {
        return fn.apply(fs, args);
      } finally {
        spent[name].ns += Number(process.hrtime.bigint() - t);
        spent[name].n += 1;
      }
    };
  fs.openSync = timed('open', real.openSync as never) as typeof fs.openSync;
  fs.writeSync = timed('write', real.writeSync as never) as typeof fs.writeSync;
  try {
    await work();
  } finally {
    Object.assign(fs, real);
  }
  return { open: spent.open.ns / spent.open.n / 1e3, write: spent.write.ns / spent.write.n / 1e3 };
}

function writeKinds(): { pieces: number; ready: number } {
  const fd = openSync(path.join(dirs[0]!, 'lines.jsonl'), 'a');
  const ready = `{"seq":7,"from":"SendingToLLM","to":"ProcessingLLMResponse","description":"LLM responded","at":1764000000000,"durationMs":3,"forced":false}\n`;
  const piece = (i: number): string =>
    `{"seq":${i},"from":"SendingToLLM","to":"ProcessingLLMResponse","description":"LLM responded","at":1764000000000,"durationMs":${i % 7},"forced":false}\n`;
  const time = (f: (i: number) => void): number => {
    const ns: number[] = [];
    for (let s = 0; s < 21; s++) {
      const t = process.hrtime.bigint();
      for (let i = 0; i < 20_000; i++) f(i);
      ns.push(Number(process.hrtime.bigint() - t) / 20_000);
    }
    return median(ns);
  };
  try {
    return { pieces: time((i) => writeSync(fd, piece(i))), ready: time(() => writeSync(fd, ready)) };
  } finally {
    closeSync(fd);
  }
}

async function main(): Promise<void> {
  console.log(
    `library under test: ${describeLibrary()}; files in ${ROOT_DIR}; ${RUNS} runs per sample, ${SAMPLES} samples`,
  );
  const us = new Map<Kind, number[]>(KINDS.map((k) => [k, []]));
  for (const k of KINDS) await once(k); // warm-up
  for (let s = 0; s < SAMPLES; s++)
    for (let j = 0; j < KINDS.length; j++) {
      const kind = KINDS[(j + s) % KINDS.length]!;
      us.get(kind)!.push(await once(kind));
    }
  console.log('\n| kind | µs per run | p25 – p75 |\n|---|---:|---:|');
  for (const k of KINDS) {
    const v = us.get(k)!;
    console.log(
      `| ${k} | ${median(v).toFixed(1)} | ${quantile(v, 0.25).toFixed(1)} – ${quantile(v, 0.75).toFixed(1)} |`,
    );
  }
  const inBatch = await callsIn(() => once('none'));
  const inLoop = await callsIn(() => once('files'));
  console.log(
    `\nin place: open(2) ${inBatch.open.toFixed(2)} µs, write(2) ${inBatch.write.toFixed(2)} µs in a 'none' batch; ` +
      `${inLoop.open.toFixed(2)} µs and ${inLoop.write.toFixed(2)} µs in a loop of their own`,
  );
  const w = writeKinds();
  console.log(
    `writeSync of a line put together from pieces: ${formatNs(w.pieces)}; of a ready-made line: ${formatNs(w.ready)}`,
  );
}

main()
  .catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  })
  .finally(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });
