import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createScriptedAgent } from '../../lib/agent/createScriptedAgent';
import type { Pricing } from '../../lib/agent/AgentLoop';
import { formatBatchReport } from '../../lib/batch/formatBatchReport';
import { runBatch, type BatchOptions, type BatchProgress } from '../../lib/batch/runBatch';
import type { BatchPause } from '../../lib/batch/raises/CapRaises';
import { InvalidArgumentError } from '../../lib/machine/InvalidArgumentError';
import { requestRaise } from '../../lib/batch/raises/requestRaise';
import { loadHistory } from '../../lib/history/loadHistory';

// $2 per million input tokens, $8 per million output tokens: each call below holds $0.01 and costs $0.006.
const pricing: Pricing = (u) => (u.inputTokens ?? 0) * 2e-6 + (u.outputTokens ?? 0) * 8e-6;
const bound = { inputTokens: 1000, maxOutputTokens: 1000, model: 'm' };
const usage = { inputTokens: 1000, outputTokens: 500 };

/** A run of two calls: a tool round, then its answer. */
function twoCalls(id: string, log: string[] = []) {
  return () =>
    createScriptedAgent({
      replies: [
        { toolCalls: [{ id: 'c1', name: 'work' }], usage, model: 'm' },
        { text: 'done', usage, model: 'm' },
      ],
      bound,
      tools: { work: () => (log.push(`${id} work`), 'ok') },
    });
}

const tasks = (n: number, log?: string[]) =>
  Array.from({ length: n }, (_, i) => ({ id: `t${i}`, input: 'go', agent: twoCalls(`t${i}`, log) }));

const base: BatchOptions = { pricing, logger: false, minOutputTokens: 1000 };

let dir: string;
beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-pause-'))));
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe("runBatch with total.whenSpent: 'pause'", () => {
  it('refuses a bad whenSpent, a pause without a strict cap, a pause with wrapUp and onPause without a pause, by name', async () => {
    const bad = (options: BatchOptions) => runBatch(tasks(1), { ...base, ...options });
    await expect(bad({ total: { maxCostUsd: 1, whenSpent: 'wait' as 'pause' } })).rejects.toThrow(
      "Expected `total.whenSpent` to be 'pause' or 'stop', got `wait` (string)",
    );
    await expect(bad({ total: { maxLlmCalls: 3, whenSpent: 'pause' } })).rejects.toThrow(
      /`total.whenSpent` to be left out \(or 'stop'\) unless `total.maxCostUsd` is set and strict/,
    );
    await expect(bad({ total: { maxCostUsd: 1, strict: false, whenSpent: 'pause' } })).rejects.toThrow(
      InvalidArgumentError,
    );
    await expect(bad({ total: { maxCostUsd: 1, wrapUp: true, whenSpent: 'pause' } })).rejects.toThrow(
      /`total.wrapUp` to be left out when `total.whenSpent` is 'pause'/,
    );
    await expect(bad({ total: { maxCostUsd: 1 }, onPause: () => undefined })).rejects.toThrow(
      /`onPause` to be left out unless `total.whenSpent` is 'pause'/,
    );
    await expect(bad({ total: { maxCostUsd: 1, whenSpnt: 'pause' } as BatchOptions['total'] })).rejects.toThrow(
      /total.whenSpnt/,
    );
  });

  it('parks the run whose call does not fit, holds back the tasks not started, and goes on when raised', async () => {
    const events: string[] = [];
    const pauses: BatchPause[] = [];
    const report = await runBatch(tasks(3), {
      ...base,
      concurrency: 1,
      total: { maxCostUsd: 0.02, whenSpent: 'pause' },
      onProgress: (p: BatchProgress) => {
        const e = p.event;
        if (e.type === 'parked' || e.type === 'unparked' || e.type === 'started')
          events.push(`${e.type} ${e.id}${'atCap' in e && e.atCap ? ' at cap' : ''}`);
        if (e.type === 'finished') events.push(`finished ${e.run.id} ${e.run.outcome}`);
      },
      onPause: (pause) => {
        pauses.push(pause);
        events.push(`paused at ${pause.capUsd} with ${pause.spentUsd.toFixed(3)} spent`);
        // Later, not in the callback: the batch waits meanwhile.
        setImmediate(() => pause.raise({ maxCostUsd: 0.05 }));
      },
    });
    expect(events).toEqual([
      'started t0',
      'finished t0 end_of_turn',
      'started t1',
      'parked t1 at cap',
      'paused at 0.02 with 0.012 spent',
      'unparked t1 at cap',
      'finished t1 end_of_turn',
      'started t2',
      'finished t2 end_of_turn',
    ]);
    expect(pauses).toHaveLength(1);
    expect(report.runs.map((r) => r.outcome)).toEqual(['end_of_turn', 'end_of_turn', 'end_of_turn']);
    expect(report.totals.costUsd).toBeCloseTo(0.036, 10);
    expect(report.limits.total).toEqual({ maxCostUsd: 0.02, whenSpent: 'pause' });
    expect(report.raises).toEqual([{ at: expect.any(Number), fromUsd: 0.02, toUsd: 0.05, by: 'handle' }]);
    expect(report.runs[1]!.capWait).toEqual({ pauses: 1, waitedMs: expect.any(Number) });
    expect(report.runs[0]!.capWait).toBeUndefined();
    expect(formatBatchReport(report)).toMatch(/cap raised: \$0\.0200 → \$0\.0500 \(by the handle\)/);
  });

  it("a folder's raises are its batch's: a new batch in it (overwriteHistory) sets them aside, a resume starts from them", async () => {
    const options: BatchOptions = {
      ...base,
      historyDir: dir,
      concurrency: 1,
      total: { maxCostUsd: 0.02, whenSpent: 'pause' },
    };
    const first = await runBatch(tasks(3), {
      ...options,
      onPause: () => void requestRaise(dir, 0.05),
    });
    expect(first.raises?.map((r) => [r.fromUsd, r.toUsd, r.by])).toEqual([[0.02, 0.05, 'folder']]);
    // Before, the raise of $0.05 asked of the first batch raised the new one's cap at its start.
    const anew = await runBatch(tasks(3), {
      ...options,
      overwriteHistory: true,
      onPause: ({ raise }) => raise({ maxCostUsd: 0.04 }),
    });
    expect(anew.raises?.map((r) => [r.fromUsd, r.toUsd, r.by])).toEqual([[0.02, 0.04, 'handle']]);
    expect(fs.readdirSync(dir).filter((n) => n.startsWith('batch.raises'))).toEqual(['batch.raises.overwritten']);
    // Asked while no batch runs: the resume starts from it.
    await requestRaise(dir, 0.06);
    const resumed = await runBatch(tasks(3), { ...options, resume: true });
    expect(resumed.raises?.map((r) => [r.fromUsd, r.toUsd, r.by])).toEqual([[0.02, 0.06, 'folder']]);
  });

  it('a raise too small parks the run again; each raise must pass the cap in force', async () => {
    const raises: number[] = [];
    let thrown: unknown;
    const report = await runBatch(tasks(2), {
      ...base,
      concurrency: 2,
      total: { maxCostUsd: 0.015, whenSpent: 'pause' },
      onPause: (pause) => {
        try {
          pause.raise({ maxCostUsd: pause.capUsd });
        } catch (error) {
          thrown ??= error;
        }
        const to = Math.round((pause.capUsd + 0.006) * 1000) / 1000;
        raises.push(to);
        setImmediate(() => pause.raise({ maxCostUsd: to }));
      },
    });
    expect(String(thrown)).toMatch(
      /`raise\(limits\).maxCostUsd` to be a finite number of USD above the cap in force \(\$0\.0150\)/,
    );
    expect(report.runs.map((r) => r.outcome)).toEqual(['end_of_turn', 'end_of_turn']);
    expect(report.raises!.map((r) => r.toUsd)).toEqual(raises);
    // Spend never passed the cap in force: the last one.
    expect(report.totals.costUsd).toBeLessThanOrEqual(raises.at(-1)!);
    expect(report.totals.costUsd).toBeCloseTo(0.024, 10);
  });

  it('an abort while paused ends the parked run as cancelled and skips the tasks not started', async () => {
    const controller = new AbortController();
    const report = await runBatch(tasks(3), {
      ...base,
      concurrency: 1,
      signal: controller.signal,
      total: { maxCostUsd: 0.02, whenSpent: 'pause' },
      onPause: () => void setImmediate(() => controller.abort()),
    });
    expect(report.runs.map((r) => r.outcome)).toEqual(['end_of_turn', 'cancelled', 'skipped']);
    expect(report.totals.costUsd).toBeCloseTo(0.012, 10);
    expect(report.raises).toEqual([]);
  });

  it("a parked run's file is whole: its calls so far journaled, the refused one never sent", async () => {
    let seen: string[] = [];
    const report = await runBatch(tasks(1), {
      ...base,
      historyDir: dir,
      total: { maxCostUsd: 0.015, whenSpent: 'pause' },
      onPause: (pause) => {
        const text = fs.readFileSync(path.join(dir, 't0.jsonl'), 'utf8');
        seen = text
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as { type?: string })
          .flatMap((l) => (l.type === undefined || l.type === 'meta' ? [] : [l.type]));
        setImmediate(() => pause.raise({ maxCostUsd: 0.1 }));
      },
    });
    // At the pause: the first call's reserve and answer, its tool; the refused call left no line.
    expect(seen).toEqual(['reserve', 'llm', 'tool']);
    expect(report.runs[0]!.outcome).toBe('end_of_turn');
    const h = await loadHistory(path.join(dir, 't0.jsonl'));
    expect(h.records.at(-1)!.to).toBe('EndOfTurn');
    const types = fs
      .readFileSync(path.join(dir, 't0.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { type?: string }).type);
    expect(types.filter((t) => t === 'reserve')).toHaveLength(2);
  });
});

describe("runBatch with total.whenSpent: 'pause' and a maxWallMs", () => {
  it('the batch deadline ends a paused batch: the parked run budget_exceeded, the tasks not started skipped', async () => {
    // The batch's clock stands still until it pauses, then jumps past the deadline: which run
    // meets it does not hang on how fast the machine is.
    let now = 1_000_000;
    const report = await runBatch(tasks(3), {
      ...base,
      concurrency: 1,
      clock: () => now,
      total: { maxCostUsd: 0.02, whenSpent: 'pause', maxWallMs: 50 },
      onPause: () => void (now += 1000),
    });
    expect(report.runs.map((r) => r.outcome)).toEqual(['end_of_turn', 'budget_exceeded', 'skipped']);
    expect(report.runs[1]!.error?.message).toMatch(/maxWallMs|wall time|elapsed/i);
    expect(report.totals.costUsd).toBeCloseTo(0.012, 10);
  });
});
