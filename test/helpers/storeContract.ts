// The contract every `RunStore` keeps, written once and run against each store
// (test/batch/FileStore.contract.test.ts, test/integrations/postgres/PostgresStore.contract.test.ts):
// a run kept as the very lines its history file has, read whole or after a line; questions across
// runs; a batch id's runs refused unless overwritten, and an overwritten run no attempt; one
// writer at a time, or the shared writers of one owner; a resume's earlier manifest and set-aside
// attempts; answers kept once and taken once. A new store plugs in with `storeContract`.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  createScriptedAgent,
  DEFAULT_TABLE,
  InvalidArgumentError,
  runBatch,
  type AgentLoop,
  type BatchOptions,
  type BatchTask,
  type ScriptedAgent,
} from '../../lib/index';
import type { ApprovalAnswer, RunStore, StoreBatchOptions } from '../../lib/subpaths/batch';
import { loadHistory, summarizeHistory } from '../../lib/subpaths/history';
import { requestRaise } from '../../lib/batch/raises/requestRaise';
import { keepsRaises } from '../../lib/batch/raises/RaiseBox';
import { storeBatchSource } from '../../lib/batch/reading/BatchSource';
import { pausingLoop, pricing } from '../fixtures/pausingLoop';
import { base, failing, script, task, tick } from './storeTasks';
import { THREE_FIGURES, threeFiguresTask } from './threeFigures';

/** The three figures of money, rounded as the ledger's sums are. */
function figures(money: { costUsd: number; uncertainUsd: number; releasedUsd: number }): Record<string, number> {
  const round = (usd: number): number => Math.round(usd * 1e10) / 1e10;
  return {
    costUsd: round(money.costUsd),
    uncertainUsd: round(money.uncertainUsd),
    releasedUsd: round(money.releasedUsd),
  };
}

/** A store of the kind under test, empty, and a second handle on the same data (another writer). */
export interface StoreUnderTest {
  store: RunStore;
  other: RunStore;
  /** Removes what the test kept, and closes both handles. */
  drop(): Promise<void>;
  /** Leaves run `runId` of batch `batchId` as a kill would: its first `keep` lines, or (0) never opened. */
  cut(batchId: string, runId: string, keep: number): Promise<void>;
}

const realSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function text(lines: AsyncIterable<Uint8Array>): Promise<string> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of lines) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

const opening = (batchId: string, tasks: string[], extra: Partial<StoreBatchOptions> = {}): StoreBatchOptions => ({
  batchId,
  owner: 'the contract',
  overwrite: false,
  manifest: { startedAt: 1, concurrency: 1, limits: {}, tasks: tasks.map((id) => ({ id, file: id })) },
  ...extra,
});

/** Registers the contract's tests for the store `open` makes, one fresh store a test. */
export function storeContract(kind: string, open: () => Promise<StoreUnderTest>): void {
  describe(`the RunStore contract: ${kind}`, () => {
    let s: StoreUnderTest;
    let store: RunStore;
    beforeEach(async () => {
      s = await open();
      store = s.store;
    });
    afterEach(() => s.drop());

    it('keeps each run as the very lines its history file has, read whole or after a count of lines', async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-contract-'));
      try {
        const onFiles = await runBatch([task('a'), failing('b')], { ...base(), historyDir: dir });
        const inStore = await runBatch([task('a'), failing('b')], { ...base(), store, batchId: 'nightly' });
        expect(inStore.batchId).toBe('nightly');
        expect(inStore.runs.map((r) => r.outcome)).toEqual(onFiles.runs.map((r) => r.outcome));
        for (const id of ['a', 'b']) {
          const file = fs.readFileSync(path.join(dir, `${id}.jsonl`), 'utf8');
          const kept = await text(store.readRun('nightly', id));
          // Byte for byte: the meta line, the moves, the journal and the ledger's reserve lines.
          expect(kept).toBe(file);
          const loaded = await loadHistory(`store ${id}`, { input: store.readRun('nightly', id) });
          const fromFile = await loadHistory(path.join(dir, `${id}.jsonl`));
          expect(summarizeHistory(loaded.entries)).toEqual(summarizeHistory(fromFile.entries));
        }
        await expect(text(store.readRun('nightly', 'nope'))).rejects.toThrow(/no such run/);
        const run = (await store.readBatch('nightly'))!.runs.find((r) => r.runId === 'a')!.run;
        const lines = (await text(store.readRun('nightly', 'a'))).split(/(?<=\n)/);
        expect(lines.length).toBeGreaterThan(3);
        for (const after of [0, 1, 3, lines.length, lines.length + 5])
          expect(await text(run.read(after))).toBe(lines.slice(after).join(''));
        await expect(run.read(-1)[Symbol.asyncIterator]().next()).rejects.toThrow(/afterLine/);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });

    it('answers questions across runs: outcome, reason, cost, calls; filtered by batch, outcome, failure and time', async () => {
      await runBatch([task('a'), failing('b')], { ...base(), store, batchId: 'one' });
      await runBatch([task('c')], { ...base(), store, batchId: 'two' });
      const all = await store.listRuns();
      expect(all.map((r) => `${r.batchId}/${r.runId}`).sort()).toEqual(['one/a', 'one/b', 'two/c']);
      const a = all.find((r) => r.runId === 'a')!;
      expect(a).toMatchObject({ outcome: 'end_of_turn', calls: 2, reason: undefined, uncertainUsd: 0 });
      expect(a.costUsd).toBeCloseTo(0.03, 10);
      const errors = await store.listRuns({ outcome: 'error' });
      expect(errors.map((r) => r.runId)).toEqual(['b']);
      expect(errors[0]!.reason).toEqual(expect.any(String));
      expect((await store.listRuns({ failed: true })).map((r) => r.runId)).toEqual(['b']);
      expect((await store.listRuns({ outcome: ['error', 'end_of_turn'], batchId: 'one' })).length).toBe(2);
      expect((await store.listRuns({ batchId: 'two' })).map((r) => r.runId)).toEqual(['c']);
      expect(await store.listRuns({ since: Date.now() + 60_000 })).toEqual([]);
      expect(await store.listRuns({ limit: 1 })).toHaveLength(1);
    });

    it('keeps the LLM calls of unknown cost of a run apart, with why: never as $0', async () => {
      // Usage but no price, and no cap to hold the worst case: the calls' money is in no dollar figure.
      const unpriced = (): AgentLoop =>
        createScriptedAgent({
          sleep: () => tick(),
          replies: [{ text: 'ok', usage: { inputTokens: 10, outputTokens: 5 }, model: 'm1' }],
        });
      const report = await runBatch([task('u', unpriced), task('p')], { ...base(), store, batchId: 'money' });
      // The batch's own report says why as well, from the run's lines as they were kept.
      expect(report.runs[0]).toMatchObject({
        usage: { unpricedCalls: 1 },
        unpriced: [{ why: 'no `pricing` was given, so the cost of m1 is unknown', calls: 1 }],
      });
      expect(report.runs[1]!.unpriced).toBeUndefined();
      const runs = await store.listRuns({ batchId: 'money' });
      expect(runs.find((r) => r.runId === 'u')).toMatchObject({
        costUsd: 0,
        unpricedCalls: 1,
        unpriced: [{ why: 'no `pricing` was given, so the cost of m1 is unknown', calls: 1 }],
      });
      expect(runs.find((r) => r.runId === 'p')).toMatchObject({ unpricedCalls: 0, unpriced: [] });
      // A resume finds both ended, and says so of each as the batch's report did.
      const again = await runBatch([task('u', unpriced), task('p')], {
        ...base(),
        store,
        batchId: 'money',
        resume: true,
      });
      expect(again.runs[0]).toMatchObject({ resumed: 'finished', outcome: report.runs[0]!.outcome });
      expect(again.runs[0]!.usage).toEqual({ ...report.runs[0]!.usage, wallMs: again.runs[0]!.usage.wallMs });
      expect(again.runs[0]!.unpriced).toEqual(report.runs[0]!.unpriced);
      expect(again.runs[1]).toMatchObject({ resumed: 'finished' });
      expect(again.runs[1]!.unpriced).toBeUndefined();
    });

    it('refuses a batch id that already holds the runs, naming them, unless overwriteHistory sets them aside', async () => {
      await runBatch([task('a'), task('b')], { ...base(), store, batchId: 'x' });
      let calls = 0;
      const counted = (id: string): BatchTask =>
        task(id, () => {
          calls += 1;
          return script();
        });
      await expect(runBatch([counted('a'), counted('b')], { ...base(), store, batchId: 'x' })).rejects.toThrow(
        /already holds runs "a", "b"/,
      );
      expect(calls).toBe(0);
      await runBatch([failing('a')], { ...base(), store, batchId: 'x', overwriteHistory: true });
      const runs = await store.listRuns({ batchId: 'x' });
      expect(runs.map((r) => `${r.runId}:${r.outcome}`).sort()).toEqual(['a:error', 'b:end_of_turn']);
      // Its readers read the batch that took its place: the set-aside run was another batch's, not an attempt.
      const read = await store.readBatch('x');
      expect(read?.manifest.tasks.map((t) => t.id)).toEqual(['a']);
      expect(read?.runs.map((r) => [r.runId, r.setAside.length]).sort()).toEqual([
        ['a', 0],
        ['b', 0],
      ]);
    });

    it('lets one batch writer at a time hold a batch id, and says while it runs', async () => {
      const held = await s.other.openBatch(opening('locked', [], { owner: 'the other writer' }));
      // Who holds it, and what to do: wait, then resume; or another id.
      await expect(runBatch([task('a')], { ...base(), store, batchId: 'locked' })).rejects.toThrow(
        /another process is writing this batch \(the other writer[^)]*\): two batches never write one batch id\. Wait for it to end \(its lock is freed when [^)]+\), then, to finish what it left, run this batch again with `resume: true`; or give this batch another `batchId`$/,
      );
      expect(await store.readBatch('locked')).toEqual({ manifest: expect.anything(), running: true, runs: [] });
      await held.close();
      expect((await store.readBatch('locked'))?.running).toBe(false);
      expect(await store.readBatch('nope')).toBeUndefined();
      const report = await runBatch([task('a')], { ...base(), store, batchId: 'locked' });
      expect(report.runs[0]!.outcome).toBe('end_of_turn');
    });

    it('lets the shared writers of one owner hold a batch together: the first records the manifest, and no one else writes', async () => {
      const join = (owner: string, from: RunStore, tasks: string[]) =>
        from.openBatch(opening('dist', tasks, { owner, shared: true, manifest: opening('dist', tasks).manifest }));
      const producer = await join('redis/q/dist', s.other, ['a', 'b']);
      expect(producer.earlier?.tasks.map((t) => t.id)).toEqual(['a', 'b']);
      const worker = await join('redis/q/dist', store, ['a']);
      expect(worker.earlier?.tasks.map((t) => t.id)).toEqual(['a', 'b']);
      await expect(runBatch([task('a')], { ...base(), store, batchId: 'dist' })).rejects.toThrow(
        /another process is writing this batch/,
      );
      await expect(join('other-redis/q/dist', store, ['a'])).rejects.toThrow(
        "the batch is another batch's (redis/q/dist), not other-redis/q/dist's: two batches never write one batch id",
      );
      expect((await store.readBatch('dist'))?.running).toBe(true);
      await producer.close();
      await worker.close();
    });

    it("gives a resume the batch's manifest and each run's attempts, newest first; an attempt set aside stays readable", async () => {
      await runBatch([task('a'), task('b')], { ...base(), store, batchId: 'r' });
      const first = await text(store.readRun('r', 'a'));
      const resumed = await store.openBatch(opening('r', ['a', 'b'], { resume: true, owner: 'the resume' }));
      try {
        expect(resumed.earlier?.tasks.map((t) => t.id)).toEqual(['a', 'b']);
        expect(await resumed.attempts('a')).toHaveLength(1);
        await resumed.setAside('a');
        const sink = await resumed.openRun('a', { startedAt: 99 }, DEFAULT_TABLE);
        await sink.close();
        const attempts = await resumed.attempts('a');
        expect(attempts).toHaveLength(2);
        expect(await text(attempts[1]!.input)).toBe(first);
        expect(JSON.parse((await text(attempts[0]!.input)).split('\n')[0]!)).toMatchObject({ type: 'meta' });
        expect(await resumed.attempts('never')).toEqual([]);
      } finally {
        await resumed.close();
      }
      const a = (await store.readBatch('r'))!.runs.find((r) => r.runId === 'a')!;
      expect(a.setAside).toHaveLength(1);
      expect(await text(a.setAside[0]!.read())).toBe(first);
      // A batch the store does not hold: nothing earlier.
      const none = await store.openBatch(opening('never', ['a'], { resume: true }));
      expect(none.earlier).toBeUndefined();
      await none.close();
    });

    it('continues a batch cut by a crash: only what did not end runs, a cut-off run goes on from its journal, its attempt kept', async () => {
      const COST = { inputTokens: 100, outputTokens: 10, costUsd: 0.1 };
      const six = (built: string[], agents: Array<[string, ScriptedAgent]> = []): BatchTask[] =>
        Array.from({ length: 6 }, (_, i) => ({
          id: `t${i}`,
          input: 'go',
          agent: (): AgentLoop => {
            built.push(`t${i}`);
            const agent = createScriptedAgent({
              sleep: () => tick(),
              replies: [
                { toolCalls: [{ id: 'c1', name: 'bash', input: {} }], usage: COST },
                { text: 'done', usage: COST },
              ],
              tools: { bash: { output: 'ok' } },
            });
            agents.push([`t${i}`, agent]);
            return agent;
          },
        }));
      await runBatch(six([]), { ...base(), store, batchId: 'b', concurrency: 2 });
      const whole = (await text(store.readRun('b', 't1'))).split(/(?<=\n)/);
      const firstAnswer = whole.findIndex((l) => l.includes('"type":"llm"')) + 1;
      expect(firstAnswer).toBeGreaterThan(0);
      await s.cut('b', 't1', firstAnswer);
      await s.cut('b', 't4', 0);
      await s.cut('b', 't5', 0);
      const cut = await text(store.readRun('b', 't1'));
      const finished = await Promise.all(['t0', 't2', 't3'].map((id) => text(store.readRun('b', id))));
      const built: string[] = [];
      const agents: Array<[string, ScriptedAgent]> = [];
      const report = await runBatch(six(built, agents), {
        ...base(),
        store,
        batchId: 'b',
        concurrency: 2,
        resume: true,
      });
      expect(built.sort()).toEqual(['t1', 't4', 't5']);
      expect(report.runs.map((r) => [r.id, r.outcome, r.resumed ?? 'new'])).toEqual([
        ['t0', 'end_of_turn', 'finished'],
        ['t1', 'end_of_turn', 'recovered'],
        ['t2', 'end_of_turn', 'finished'],
        ['t3', 'end_of_turn', 'finished'],
        ['t4', 'end_of_turn', 'new'],
        ['t5', 'end_of_turn', 'new'],
      ]);
      // t1's first response was served from its journal: only its second call left the process.
      const sent = agents.flatMap(([id, agent]) =>
        agent.calls.filter((c) => c.op === 'sendUserMessage' || c.op === 'sendToolResults').map((c) => `${id}:${c.op}`),
      );
      expect(sent.filter((c) => c.startsWith('t1:'))).toEqual(['t1:sendToolResults']);
      expect(report.runs[1]!.usage.costUsd).toBeCloseTo(0.2, 10);
      expect(report.totals.costUsd).toBeCloseTo(1.2, 10);
      expect(await Promise.all(['t0', 't2', 't3'].map((id) => text(store.readRun('b', id))))).toEqual(finished);
      const read = await store.readBatch('b');
      expect(read?.running).toBe(false);
      const t1 = read!.runs.find((r) => r.runId === 't1')!;
      expect(t1.setAside).toHaveLength(1);
      expect(await text(t1.setAside[0]!.read())).toBe(cut);
      expect(read!.runs.filter((r) => r.runId !== 't1').every((r) => r.setAside.length === 0)).toBe(true);
      expect((await store.listRuns({ batchId: 'b' })).map((r) => `${r.runId}:${r.outcome}`).sort()).toEqual(
        ['t0', 't1', 't2', 't3', 't4', 't5'].map((id) => `${id}:end_of_turn`),
      );
      const again: string[] = [];
      const last = await runBatch(six(again), { ...base(), store, batchId: 'b', resume: true });
      expect(again).toEqual([]);
      expect(last.runs.every((r) => r.resumed === 'finished')).toBe(true);
    });

    it('reports a run that ended after two cuts, found ended by a later resume, with its money apart and why, as its own report did', async () => {
      const IN_FLIGHT = 'reserved, and no response recorded (in flight when the file ended)';
      const tasks: BatchTask[] = [
        {
          id: 't',
          input: 'go',
          agent: () =>
            createScriptedAgent({
              sleep: () => tick(),
              // Each call's worst case: $0.003 (1,000 tokens in, 500 out, at $1 and $4 a million).
              bound: { inputTokens: 1000, maxOutputTokens: 500, model: 'm' },
              replies: [
                { toolCalls: [{ id: 'c1', name: 'look', input: {} }], usage: { inputTokens: 500, outputTokens: 100 } },
                { toolCalls: [{ id: 'c2', name: 'look', input: {} }], usage: { inputTokens: 500, outputTokens: 100 } },
                { text: 'done', usage: { inputTokens: 500, outputTokens: 100 } },
              ],
              tools: { look: { output: 'seen' } },
            }),
        },
      ];
      const options: BatchOptions = {
        ...base(),
        store,
        batchId: 'b',
        pricing: (u) => (u.inputTokens ?? 0) * 1e-6 + (u.outputTokens ?? 0) * 4e-6,
      };
      /** Leaves the run as a kill with its second unanswered call in flight would: up to its second reserve line. */
      const cutAtSecondReserve = async (): Promise<void> => {
        const lines = (await text(store.readRun('b', 't'))).split(/(?<=\n)/);
        const reserves = lines.flatMap((l, i) => (l.startsWith('{"type":"reserve"') ? [i] : []));
        await s.cut('b', 't', reserves[1]! + 1);
      };
      await runBatch(tasks, options);
      await cutAtSecondReserve();
      await runBatch(tasks, { ...options, resume: true });
      await cutAtSecondReserve();
      const ended = (await runBatch(tasks, { ...options, resume: true })).runs[0]!;
      expect(ended).toMatchObject({ outcome: 'end_of_turn', resumed: 'recovered' });
      expect(ended.usage.uncertainUsd).toBeCloseTo(0.006, 10);
      expect(ended.uncertain).toEqual([{ why: IN_FLIGHT, calls: 2 }]);
      const found = (await runBatch(tasks, { ...options, resume: true })).runs[0]!;
      expect(found.resumed).toBe('finished');
      // Billed and uncertain apart, as the run's report gave them, not its uncertain money called billed.
      expect(found.usage).toEqual({ ...ended.usage, wallMs: found.usage.wallMs });
      expect(found.uncertain).toEqual([{ why: IN_FLIGHT, calls: 2 }]);
      // And the store's list of runs says the same.
      const [listed] = await store.listRuns({ batchId: 'b' });
      expect(listed).toMatchObject({ costUsd: ended.usage.costUsd, uncertainUsd: ended.usage.uncertainUsd });
      expect(listed!.uncertain).toEqual([{ why: IN_FLIGHT, calls: 2 }]);
    });

    it('keeps the three figures of a run cut off and resumed: each counts both attempts, in the report and in the store', async () => {
      const options: BatchOptions = { ...base(), ...THREE_FIGURES, store, batchId: 'three' };
      await runBatch([threeFiguresTask('t', () => tick())], options);
      // Cut where a kill after the 500 leaves it: the third attempt reserved, in flight, not answered.
      const lines = (await text(store.readRun('three', 't'))).split(/(?<=\n)/);
      const reserves = lines.flatMap((l, i) => (l.startsWith('{"type":"reserve"') ? [i] : []));
      expect(reserves).toHaveLength(3);
      await s.cut('three', 't', reserves[2]! + 1);
      const run = (await runBatch([threeFiguresTask('t', () => tick())], { ...options, resume: true })).runs[0]!;
      // Restarted, it spends as the first attempt did; the attempt cut off released the 429's hold
      // and charged the 500's and that of the call in flight at the cut (it may have been billed).
      const three = { costUsd: 0.0306, uncertainUsd: 0.03, releasedUsd: 0.02 };
      expect(run).toMatchObject({ outcome: 'end_of_turn', resumed: 'restarted' });
      expect(figures(run.usage)).toEqual(three);
      const [listed] = await store.listRuns({ batchId: 'three' });
      expect(figures(listed!)).toEqual(three);
      const found = (await runBatch([threeFiguresTask('t', () => tick())], { ...options, resume: true })).runs[0]!;
      expect(found.resumed).toBe('finished');
      expect(figures(found.usage)).toEqual(three);
    });

    it('keeps an answer once per wait, takes it once, and says what a call has already', async () => {
      await runBatch([task('a')], { ...base(), store, batchId: 'asked' });
      expect(store.keepAnswer).toBeDefined();
      const answer: ApprovalAnswer = { run: 'a', callId: 'c1', approved: true, at: 10, waitingSince: 5, by: 'alice' };
      expect(await store.keepAnswer!('asked', answer)).toBeUndefined();
      // A second answer keeps nothing and is told the first, still waiting.
      expect(await store.keepAnswer!('asked', { ...answer, approved: false, by: 'bob' })).toMatchObject({
        approved: true,
        by: 'alice',
        taken: false,
      });
      expect(await store.readAnswers!('asked')).toEqual([{ ...answer, taken: false }]);
      await store.markAnswerTaken!('asked', answer);
      await store.markAnswerTaken!('asked', answer);
      expect(await store.readAnswers!('asked')).toEqual([{ ...answer, taken: true }]);
      // Taken for the same wait: told so; a later wait of the same call id is answered anew.
      expect(await store.keepAnswer!('asked', { ...answer, by: 'carol' })).toMatchObject({ by: 'alice', taken: true });
      const later = { ...answer, waitingSince: 50, at: 60, by: 'dan' };
      expect(await store.keepAnswer!('asked', later)).toBeUndefined();
      expect((await store.readAnswers!('asked')).filter((a) => !a.taken)).toEqual([{ ...later, taken: false }]);
      // An answer of another wait is not marked taken by this one's.
      await store.markAnswerTaken!('asked', answer);
      expect((await store.readAnswers!('asked')).filter((a) => !a.taken)).toHaveLength(1);
    });

    it('keeps the raises asked of a batch paused at its cap and its pause; a batch started anew sets them aside, a resume starts from them', async () => {
      expect(keepsRaises(store)).toBe(true);
      const tasks = ['t0', 't1', 't2'].map((id) => ({ id, input: 'go', agent: pausingLoop }));
      const paused = (maxCostUsd: number): BatchOptions => ({
        ...base(),
        store,
        batchId: 'paused',
        concurrency: 1,
        pricing,
        minOutputTokens: 1000,
        total: { maxCostUsd, whenSpent: 'pause' },
      });
      let seen: unknown;
      const first = await runBatch(tasks, {
        ...paused(0.02),
        // Paused: readers in other processes see it, until a raise asked through the store lets it go on.
        onPause: async () => {
          for (let i = 0; i < 500 && (await store.readPause!('paused')) === undefined; i++) await realSleep(10);
          seen = (await storeBatchSource(store, 'paused')).paused;
          await requestRaise({ store, batchId: 'paused' }, 0.05, () => 77);
        },
      });
      expect(seen).toMatchObject({ capUsd: 0.02 });
      expect(first.runs.map((r) => r.outcome)).toEqual(['end_of_turn', 'end_of_turn', 'end_of_turn']);
      expect(first.raises?.map((r) => [r.fromUsd, r.toUsd, r.by])).toEqual([[0.02, 0.05, 'store']]);
      expect(await store.readRaises!('paused')).toEqual([{ maxCostUsd: 0.05, at: 77 }]);
      expect(await store.readPause!('paused')).toBeUndefined();
      await expect(requestRaise({ store, batchId: 'paused' }, 0.05)).rejects.toThrow(
        /above the one in force \(\$0\.0500\)/,
      );
      await expect(requestRaise({ store, batchId: 'none' }, 1)).rejects.toThrow(/no such batch/);

      // Anew under the same id: the raise asked of the batch before is not this one's.
      const anew = await runBatch(tasks, {
        ...paused(0.02),
        overwriteHistory: true,
        onPause: ({ raise }) => raise({ maxCostUsd: 0.04 }),
      });
      expect(anew.raises?.map((r) => [r.fromUsd, r.toUsd, r.by])).toEqual([[0.02, 0.04, 'handle']]);
      expect(await store.readRaises!('paused')).toEqual([]);
      // A raise asked while no batch runs it: its resume starts from it.
      await requestRaise({ store, batchId: 'paused' }, 0.06, () => 88);
      const resumed = await runBatch(tasks, { ...paused(0.02), resume: true });
      expect(resumed.raises?.map((r) => [r.fromUsd, r.toUsd, r.by])).toEqual([[0.02, 0.06, 'store']]);
    });

    it('refuses by name historyDir beside a store, resume without a batchId, and what is not a store', async () => {
      await expect(runBatch([task('a')], { ...base(), store, historyDir: '/tmp/x' })).rejects.toThrow(
        expect.objectContaining({ name: 'InvalidArgumentError', message: expect.stringContaining('historyDir') }),
      );
      await expect(runBatch([task('a')], { ...base(), store, resume: true })).rejects.toThrow(
        /resume.*unless `batchId` names the batch to resume/s,
      );
      await expect(runBatch([task('a')], { ...base(), batchId: 'x' })).rejects.toThrow(InvalidArgumentError);
      await expect(runBatch([task('a')], { ...base(), store: {} as never })).rejects.toThrow(/RunStore/);
    });
  });
}
