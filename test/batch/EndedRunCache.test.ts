import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { createScriptedAgent, type ScriptedReply } from '../../lib/agent/createScriptedAgent';
import type { LLMResponse } from '../../lib/agent/AgentLoop';
import type { StepMirror } from '../../lib/agent/StepMirror';
import type { FrameworkTask } from '../../lib/batch/tasks/runFrameworkTask';
import { runBatch, type BatchOptions, type BatchTask } from '../../lib/batch/runBatch';
import { resumeState, type TaskState } from '../../lib/batch/resume/resumeState';
import { folderEarlierRuns } from '../../lib/batch/resume/EarlierRuns';
import { ENDED_RUNS_FILE } from '../../lib/batch/resume/EndedRunCache';
import * as readRunFileModule from '../../lib/history/readRunFile';

const instant = async (): Promise<void> => undefined;
const BOUND = { inputTokens: 100, maxOutputTokens: 100 };
const COST = { inputTokens: 100, outputTokens: 10, costUsd: 0.01 };

// Runs that end each way a resume reports: an answer, an error, a per-run cap.
const SCRIPTS: Record<string, ScriptedReply[]> = {
  answer: [
    { toolCalls: [{ id: 'c1', name: 'bash' }], usage: COST },
    { text: 'done', usage: COST },
  ],
  error: [{ error: 'HTTP 500 upstream' }],
  capped: [
    { toolCalls: [{ id: 'c1', name: 'bash' }], usage: COST },
    { toolCalls: [{ id: 'c2', name: 'bash' }], usage: COST },
    { text: 'never', usage: COST },
  ],
};

function tasks(kinds: string[]): BatchTask[] {
  return kinds.map((kind, i) => ({
    id: `t${i}`,
    input: 'go',
    agent: () => createScriptedAgent({ sleep: instant, replies: SCRIPTS[kind]!, tools: { bash: { output: 'ok' } } }),
  }));
}

let dir: string;
beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-ended-cache-'))));
afterEach(() => {
  jest.restoreAllMocks();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function batchIn(folder: string, kinds: string[]): Promise<string[]> {
  await runBatch(tasks(kinds), {
    historyDir: folder,
    concurrency: 2,
    logger: false,
    perRun: { maxLlmCalls: 2, strict: false },
    retry: { retries: 0 },
  });
  return kinds.map((_, i) => `t${i}`);
}

/**
 * What a resume of the folder reports of each task: its state over every attempt, less what a
 * read of a file keeps to work out the reasons over them (`attempt`, `attempts`: the cache keeps the reasons).
 */
async function reported(folder: string, ids: string[]): Promise<TaskState[]> {
  const { states } = await folderEarlierRuns(folder, ids, false);
  return states.map((state) => {
    if (state.kind !== 'finished') return state;
    const { attempt: _attempt, attempts: _attempts, ...rest } = state;
    return rest;
  });
}

/** What a resume of the folder sees when it reads every file whole: the cache moved away, then put back. */
async function statesReadWhole(folder: string, ids: string[]): Promise<unknown> {
  const cache = path.join(folder, ENDED_RUNS_FILE);
  const kept = fs.existsSync(cache) ? fs.readFileSync(cache) : undefined;
  fs.rmSync(cache, { force: true });
  try {
    return await reported(folder, ids);
  } finally {
    if (kept === undefined) fs.rmSync(cache, { force: true });
    else fs.writeFileSync(cache, kept);
  }
}

describe('the ended-run cache of a batch folder', () => {
  it('lets a resume of ended runs read no run file, and say what reading each file whole says', async () => {
    const ids = await batchIn(dir, ['answer', 'error', 'capped', 'answer']);
    const lines = fs.readFileSync(path.join(dir, ENDED_RUNS_FILE), 'utf8').trim().split('\n');
    expect(lines).toHaveLength(4);
    const whole = await statesReadWhole(dir, ids);
    const read = jest.spyOn(readRunFileModule, 'readRunFile');
    const states = await reported(dir, ids);
    expect(read).not.toHaveBeenCalled();
    expect(states).toEqual(whole);
    expect(states.map((s) => (s.kind === 'finished' ? s.outcome : s.kind))).toEqual([
      'end_of_turn',
      'error',
      'budget_exceeded',
      'end_of_turn',
    ]);
    const failed = states[1]!;
    expect(failed.kind === 'finished' && failed.reason).toMatch(/HTTP 500 upstream/);
  });

  it('reads a file whole once it changed after its entry: cut short, grown, or written again', async () => {
    const ids = await batchIn(dir, ['answer', 'answer', 'answer']);
    const t0 = path.join(dir, 't0.jsonl');
    const text = fs.readFileSync(t0, 'utf8').split('\n');
    fs.writeFileSync(t0, `${text.slice(0, 5).join('\n')}\n`); // cut: the run did not end
    const t1 = path.join(dir, 't1.jsonl');
    const same = fs.readFileSync(t1);
    const { mtime } = fs.statSync(t1);
    fs.writeFileSync(t1, same); // the same bytes, written again: a new mtime (set, since the clock
    fs.utimesSync(t1, mtime, new Date(mtime.getTime() + 1000)); // of file times is coarse)
    fs.rmSync(path.join(dir, 't2.jsonl')); // gone: never started
    const read = jest.spyOn(readRunFileModule, 'readRunFile');
    const states = await resumeState(dir, ids);
    expect(states.map((s) => s.kind)).toEqual(['interrupted', 'finished', 'not_started']);
    expect(read).toHaveBeenCalledTimes(2);
    // The file read whole went back in the cache: the next resume reads only the cut one.
    read.mockClear();
    await resumeState(dir, ids);
    expect(read).toHaveBeenCalledTimes(1);
  });

  it('reads whole a file whose entry is from before the money was kept apart, and notes it anew', async () => {
    const ids = await batchIn(dir, ['answer', 'error']);
    const cache = path.join(dir, ENDED_RUNS_FILE);
    // An older release's entries: no reasons, and uncertain and released USD at 0 whatever the run spent.
    const old = fs
      .readFileSync(cache, 'utf8')
      .trim()
      .split('\n')
      .map((line) => {
        const { uncertain: _u, unpriced: _p, ...rest } = JSON.parse(line) as Record<string, unknown>;
        return JSON.stringify(rest);
      });
    fs.writeFileSync(cache, `${old.join('\n')}\n`);
    const read = jest.spyOn(readRunFileModule, 'readRunFile');
    await resumeState(dir, ids);
    expect(read).toHaveBeenCalledTimes(2);
    read.mockClear();
    await resumeState(dir, ids);
    expect(read).not.toHaveBeenCalled();
  });

  it('is started afresh by a new batch in the folder', async () => {
    await batchIn(dir, ['answer', 'answer']);
    await runBatch(tasks(['error']), { historyDir: dir, logger: false, overwriteHistory: true });
    const lines = fs.readFileSync(path.join(dir, ENDED_RUNS_FILE), 'utf8').trim().split('\n');
    expect(lines.map((l) => (JSON.parse(l) as { file: string }).file)).toEqual(['t0.jsonl']);
  });

  it('whatever is left of it (torn, garbled, entries of other sizes), a resume says what the files say', async () => {
    const kinds = ['answer', 'error', 'capped', 'answer', 'error'];
    const ids = await batchIn(dir, kinds);
    const cacheFile = path.join(dir, ENDED_RUNS_FILE);
    const original = fs.readFileSync(cacheFile, 'utf8');
    const whole = await statesReadWhole(dir, ids);
    await fc.assert(
      fc.asyncProperty(
        fc.nat({ max: original.length }),
        fc.array(fc.constantFrom('{', '}', '"', ',', 'x', '\n', '0', ':'), { maxLength: 40 }),
        fc.nat({ max: 4 }),
        async (cut, noise, shrunk) => {
          // A torn write, junk after it, and an entry claiming another size for one file.
          const entries = original.slice(0, cut) + noise.join('');
          const firstLine = original.split('\n')[shrunk]!;
          const wrongSize = firstLine.replace(/"size":(\d+)/, (_, n: string) => `"size":${Number(n) + 1}`);
          fs.writeFileSync(cacheFile, `${entries}\n${wrongSize}\n`);
          expect(await reported(dir, ids)).toEqual(whole);
        },
      ),
      { numRuns: 40, seed: 36 },
    );
  });

  it('learns each run as its file is written, and says exactly what reading the file back says (property)', async () => {
    const reply = fc.constantFrom<ScriptedReply>(
      { toolCalls: [{ id: 'c1', name: 'bash' }], usage: COST },
      {
        toolCalls: [
          { id: 'c1', name: 'bash' },
          { id: 'c2', name: 'bash' },
        ],
        usage: COST,
      },
      { toolCalls: [{ id: 'c1', name: 'bash' }], usage: { inputTokens: 100, outputTokens: 10 } },
      { text: 'done', usage: COST },
      { text: 'done' },
      { error: 'HTTP 500 upstream' },
    );
    const replies = fc.array(reply, { minLength: 1, maxLength: 5 });
    let round = 0;
    await fc.assert(
      // A batch of agent tasks, or of framework tasks driven by hand through their mirror.
      // Then, maybe, one run's file cut where a kill would leave it, and the batch resumed.
      fc.asyncProperty(
        fc.boolean(),
        fc.array(replies, { minLength: 1, maxLength: 5 }),
        fc.option(fc.record({ task: fc.nat(), keep: fc.double({ min: 0.2, max: 0.9, noNaN: true }) })),
        async (framework, scripts, cut) => {
          const folder = path.join(dir, `round-${round++}`);
          const list: (BatchTask | FrameworkTask)[] = scripts.map<BatchTask | FrameworkTask>((replies, i) =>
            framework
              ? { id: `t${i}`, input: 'go', drive: (mirror: StepMirror) => driveByHand(mirror, replies) }
              : {
                  id: `t${i}`,
                  input: 'go',
                  agent: () =>
                    createScriptedAgent({ sleep: instant, replies, bound: BOUND, tools: { bash: { output: 'ok' } } }),
                },
          );
          const options: BatchOptions = {
            historyDir: folder,
            historyDurability: 'none', // what is written, not when it reaches the disk
            // A framework retries its own calls, and waits between them.
            ...(framework ? {} : { sleep: instant, retry: { retries: 0 } }),
            concurrency: 2,
            logger: false,
            pricing: (usage) => ((usage.inputTokens ?? 0) + (usage.outputTokens ?? 0)) * 1e-4,
            perRun: { maxLlmCalls: 3, maxCostUsd: 0.2 },
          };
          await runBatch(list, options);
          const ids = list.map((t) => t.id);
          if (cut !== null) {
            const file = path.join(folder, `${ids[cut.task % ids.length]!}.jsonl`);
            const lines = fs
              .readFileSync(file, 'utf8')
              .split('\n')
              .filter((l) => l !== '');
            fs.writeFileSync(file, `${lines.slice(0, Math.max(2, Math.floor(lines.length * cut.keep))).join('\n')}\n`);
            // The run goes on (continued from its journal, or restarted): its new file is learned as it is written.
            await runBatch(list, { ...options, resume: true });
          }
          const read = jest.spyOn(readRunFileModule, 'readRunFile');
          let fromCache: TaskState[];
          try {
            fromCache = await reported(folder, ids);
          } finally {
            read.mockRestore();
          }
          // Every run ended, and no run file was read back: the batch learned each as it was written.
          expect(fromCache.every((s) => s.kind === 'finished')).toBe(true);
          expect(read).not.toHaveBeenCalled();
          expect(fromCache).toEqual(await statesReadWhole(folder, ids));
        },
      ),
      { numRuns: 25, seed: 40 },
    );
  }, 30_000);
});

/** A framework's loop, as a mirror hears it: each reply a model call, each tool call run. */
async function driveByHand(mirror: StepMirror, replies: readonly ScriptedReply[]): Promise<void> {
  for (const r of replies) {
    if ((await mirror.modelCallStart(BOUND)) !== undefined) return;
    if ('error' in r && r.error !== undefined) {
      mirror.modelCallFailed(new Error(String(r.error)), { willRetry: false });
      return;
    }
    const response = r as LLMResponse;
    mirror.modelResponse(response);
    for (const call of response.toolCalls ?? []) {
      if ((await mirror.toolStart(call)) !== undefined) return;
      mirror.toolEnd(call.id, { output: 'ok' });
    }
    if (response.toolCalls === undefined) return;
  }
}
