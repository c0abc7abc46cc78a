// A run cut off twice, each attempt with a call in flight at the cut (a reservation with no
// answer: the provider may have billed it, so its worst case counts as uncertain), then resumed
// to its end. What the money is counted over every attempt, and so is why: runBatch's report and
// the folder's readers name both calls in flight, not only the live attempt's reasons.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createScriptedAgent, runBatch, type BatchTask, type Pricing } from '../../lib/index';
import { readBatchFolder } from '../../lib/batch/reading/readBatchFolder';
import { reasonsOverAttempts } from '../../lib/history/spendOverAttempts';
import { ENDED_RUNS_FILE } from '../../lib/batch/resume/EndedRunCache';

/** $1 a million input tokens, $4 a million output tokens. */
const pricing: Pricing = (u) => (u.inputTokens ?? 0) * 1e-6 + (u.outputTokens ?? 0) * 4e-6;
/** Each call's worst case: 1,000 tokens in, 500 out, $0.003. */
const bound = { inputTokens: 1000, maxOutputTokens: 500, model: 'm' };
const usage = { inputTokens: 500, outputTokens: 100 };
const IN_FLIGHT = 'reserved, and no response recorded (in flight when the file ended)';

const task: BatchTask[] = [
  {
    id: 't',
    input: 'go',
    agent: () =>
      createScriptedAgent({
        sleep: async () => undefined,
        bound,
        replies: [
          { toolCalls: [{ id: 'c1', name: 'look', input: {} }], usage },
          { toolCalls: [{ id: 'c2', name: 'look', input: {} }], usage },
          { text: 'done', usage },
        ],
        tools: { look: { output: 'seen' } },
      }),
  },
];

let dir: string;
beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-reasons-'))));
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Cuts the run's file after its `n`th reserve line that no answer served from a journal preceded (a kill with that call in flight). */
function cutAfterReserve(n: number): void {
  const file = path.join(dir, 't.jsonl');
  const lines = fs.readFileSync(file, 'utf8').split(/(?<=\n)/);
  const at = lines.flatMap((l, i) => (l.startsWith('{"type":"reserve"') ? [i] : []))[n - 1]!;
  fs.writeFileSync(file, lines.slice(0, at + 1).join(''));
}

it('the reasons of a run resumed twice cover the calls in flight at each cut', async () => {
  const options = { historyDir: dir, logger: false, pricing } as const;
  await runBatch(task, options);
  // First attempt: the first call answered, the second in flight.
  cutAfterReserve(2);
  await runBatch(task, { ...options, resume: true });
  // Second attempt: served the first answer, answered the second, the third in flight.
  cutAfterReserve(2);
  const resumed = await runBatch(task, { ...options, resume: true });
  const run = resumed.runs[0]!;
  expect(run).toMatchObject({ outcome: 'end_of_turn', resumed: 'recovered' });
  // Two calls at their worst case ($0.003 each) may have been billed: both named, not none.
  expect(run.usage.uncertainUsd).toBeCloseTo(0.006, 10);
  expect(run.uncertain).toEqual([{ why: IN_FLIGHT, calls: 2 }]);
  const read = await readBatchFolder(dir, { onWarning: () => undefined });
  expect(read.runs[0]!.uncertainUsd).toBeCloseTo(0.006, 10);
  expect(read.runs[0]!.uncertain).toEqual([{ why: IN_FLIGHT, calls: 2 }]);
});

it('reasonsOverAttempts adds each attempt’s own calls, bounded from below by the live file’s', () => {
  const a = { why: 'a', calls: 1 };
  expect(
    reasonsOverAttempts(
      [],
      [
        [a],
        [
          { why: 'a', calls: 2 },
          { why: 'b', calls: 1 },
        ],
      ],
    ),
  ).toEqual([
    { why: 'a', calls: 3 },
    { why: 'b', calls: 1 },
  ]);
  // The live file counts the calls it was served again: they are not added twice.
  expect(reasonsOverAttempts([{ why: 'a', calls: 2 }], [[a], [a]])).toEqual([{ why: 'a', calls: 2 }]);
  expect(reasonsOverAttempts([{ why: 'c', calls: 4 }], [[a]])).toEqual([
    { why: 'c', calls: 4 },
    { why: 'a', calls: 1 },
  ]);
  expect(reasonsOverAttempts([], [])).toEqual([]);
});

it('a later resume finds the run ended and reports it as its own report did: the money apart, and why, from the cache or the file', async () => {
  const options = { historyDir: dir, logger: false, pricing } as const;
  await runBatch(task, options);
  cutAfterReserve(2);
  await runBatch(task, { ...options, resume: true });
  cutAfterReserve(2);
  const ended = (await runBatch(task, { ...options, resume: true })).runs[0]!;
  expect(ended.usage.uncertainUsd).toBeCloseTo(0.006, 10);
  const cache = path.join(dir, ENDED_RUNS_FILE);
  const expectFoundEnded = async (): Promise<void> => {
    const found = (await runBatch(task, { ...options, resume: true })).runs[0]!;
    expect(found.resumed).toBe('finished');
    // Billed and uncertain apart: its uncertain money is not called billed.
    expect(found.usage).toEqual({ ...ended.usage, wallMs: found.usage.wallMs });
    expect(found.uncertain).toEqual([{ why: IN_FLIGHT, calls: 2 }]);
  };
  // The batch noted the run in the folder's cache as it ended, with the reasons over its attempts.
  expect(fs.readFileSync(cache, 'utf8')).toContain(IN_FLIGHT);
  await expectFoundEnded();
  // An entry written before the reasons were kept: not trusted for a run with uncertain money; its files are read.
  const entry = JSON.parse(fs.readFileSync(cache, 'utf8').trim().split('\n').at(-1)!) as Record<string, unknown>;
  delete entry['uncertain'];
  delete entry['unpriced'];
  fs.writeFileSync(cache, `${JSON.stringify(entry)}\n`);
  await expectFoundEnded();
  // No cache: the run's file and the attempts set aside beside it are read.
  fs.rmSync(cache);
  await expectFoundEnded();
});
