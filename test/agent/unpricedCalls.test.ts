// A call whose cost nobody knows is never $0. With no `pricing` (or a model it lacks) and no
// cap to hold the call's worst case, the call's money is in none of the three figures: usage
// counts it in `unpricedCalls`, its journal line says why (`unpriced`), and every report says
// "and N LLM calls of unknown cost (why)" beside the dollars, on the adapter, the mirror, a
// batch's report and its folder read back.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  createScriptedAgent,
  formatBatchReport,
  runBatch,
  StepMirror,
  type LLMResponse,
  type Pricing,
} from '../../lib/index';
import { JsonlHistorySink, loadHistory, formatConversation, runFacts } from '../../lib/subpaths/history';
import { readBatchFolder } from '../../lib/batch/reading/readBatchFolder';
import { formatBatchFolder } from '../../lib/cli/formatBatchFolder';
import { formatSpend } from '../../lib/internal/formatSpend';
import { drive } from '../helpers/drive';
import { manualClock } from '../helpers/manualClock';
import { threeCallTask } from '../helpers/threeCallTask';

const NO_PRICING = 'no `pricing` was given, so the cost of m1 is unknown';
const usage = { inputTokens: 100, outputTokens: 50 };

/** One task of three calls of unknown cost (two ask for a tool), for the resumes. */
const threeCalls = () => threeCallTask(usage);

let dir: string;
beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-unpriced-'))));
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('LLM calls of unknown cost', () => {
  it('the adapter counts them apart, its journal says why, and the file read back says "of unknown cost", not $0', async () => {
    const file = path.join(dir, 'run.jsonl');
    const sink = JsonlHistorySink.open(file, { runId: 'r' });
    const d = drive(
      {
        replies: [
          { toolCalls: [{ id: 'c1', name: 'look', input: {} }], usage, model: 'm1' },
          { text: 'done', usage, model: 'm1' },
        ],
        tools: { look: { output: 'seen' } },
      },
      { sink, journal: true },
    );
    const result = await d.adapter.runTurn('go');
    sink.close();
    expect(result.outcome).toBe('end_of_turn');
    expect(result.usage).toMatchObject({ costUsd: 0, uncertainUsd: 0, unpricedCalls: 2, llmCalls: 2 });
    const history = await loadHistory(file);
    const llm = history.journal.filter((j) => j.type === 'llm');
    expect(llm.map((j) => j['unpriced'])).toEqual([NO_PRICING, NO_PRICING]);
    expect(llm.map((j) => j['costUsd'])).toEqual([undefined, undefined]);
    const { spend } = runFacts(history.entries);
    expect(spend).toMatchObject({ costUsd: 0, unpricedCalls: 2, unpriced: [{ why: NO_PRICING, calls: 2 }] });
    expect(formatSpend(spend)).toBe(`$0.0000 billed, and 2 LLM calls of unknown cost (${NO_PRICING})`);
    expect(formatConversation(history.entries)).toContain(`cost unknown (${NO_PRICING})`);
  });

  it('without the journal the moves still carry the count, with no reason to give', async () => {
    const file = path.join(dir, 'run.jsonl');
    const sink = JsonlHistorySink.open(file, { runId: 'r' });
    const d = drive({ replies: [{ text: 'done', usage, model: 'm1' }] }, { sink });
    await d.adapter.runTurn('go');
    sink.close();
    const { spend } = runFacts((await loadHistory(file)).entries);
    expect(spend).toMatchObject({ unpricedCalls: 1, unpriced: [] });
    expect(formatSpend(spend)).toBe('$0.0000 billed, and 1 LLM call of unknown cost');
  });

  it('pricing that lacks the model says so; a priced call and a call held at a cap are not unpriced', async () => {
    const pricing: Pricing = (u, { model }) => (model === 'known' ? (u.inputTokens ?? 0) * 1e-6 : undefined);
    const d = drive(
      {
        replies: [
          { toolCalls: [{ id: 'c1', name: 'look', input: {} }], usage, model: 'known' },
          { text: 'done', usage, model: 'mystery' },
        ],
        tools: { look: { output: 'seen' } },
      },
      { pricing },
    );
    const money: unknown[] = [];
    d.adapter.on('llmAttempt', (e) => money.push(e.money));
    const result = await d.adapter.runTurn('go');
    expect(result.usage).toMatchObject({ costUsd: 0.0001, unpricedCalls: 1 });
    expect(money).toEqual([
      { figure: 'billed', usd: expect.closeTo(0.0001, 12) },
      { figure: 'unknown', why: 'the cost of mystery is unknown' },
    ]);
    // A strict cap holds each call's worst case: a response with no usage is charged at it (uncertain), never unpriced.
    const held = drive(
      {
        replies: [{ text: 'done', model: 'known' }],
        bound: { inputTokens: 1000, maxOutputTokens: 100, model: 'known' },
      },
      { pricing, budget: { maxCostUsd: 1, strict: true } },
    );
    const heldResult = await held.adapter.runTurn('go');
    expect(heldResult.usage).toMatchObject({ uncertainUsd: expect.any(Number), unpricedCalls: 0 });
    expect(heldResult.usage.uncertainUsd).toBeGreaterThan(0);
  });

  it('the mirror counts them as the adapter does', async () => {
    const file = path.join(dir, 'mirror.jsonl');
    const sink = JsonlHistorySink.open(file, { runId: 'r' });
    const mirror = new StepMirror({ sink, clock: manualClock().now, logger: false, journal: true });
    mirror.runStart('go');
    expect(await mirror.modelCallStart()).toBeUndefined();
    mirror.modelResponse({ text: 'done', usage, model: 'm1' });
    const result = mirror.runEnd();
    sink.close();
    expect(result.usage).toMatchObject({ costUsd: 0, unpricedCalls: 1 });
    const { spend } = runFacts((await loadHistory(file)).entries);
    expect(spend).toMatchObject({ unpricedCalls: 1, unpriced: [{ why: NO_PRICING, calls: 1 }] });
  });

  it("a framework run resumed twice counts each once: a mirror's served line, which says why, is not counted again", async () => {
    const replies: LLMResponse[] = [
      { toolCalls: [{ id: 'c1', name: 'look', input: {} }], usage, model: 'm1' },
      { toolCalls: [{ id: 'c2', name: 'look', input: {} }], usage, model: 'm1' },
      { text: 'done', usage, model: 'm1' },
    ];
    const drive = async (mirror: StepMirror): Promise<void> => {
      for (const reply of replies) {
        if (mirror.recordedResponse() === undefined) {
          if ((await mirror.modelCallStart()) !== undefined) return;
          mirror.modelResponse(reply);
        }
        for (const call of reply.toolCalls ?? []) {
          if ((await mirror.toolStart(call)) !== undefined) return;
          mirror.toolEnd(call.id, { output: 'seen' });
        }
      }
    };
    const tasks = () => [{ id: 't', input: 'go', drive: (mirror: StepMirror) => drive(mirror) }];
    const file = path.join(dir, 't.jsonl');
    const cutAfterFirst = (find: (line: string) => boolean): void => {
      const lines = fs.readFileSync(file, 'utf8').split(/(?<=\n)/);
      fs.writeFileSync(file, lines.slice(0, lines.findIndex(find) + 1).join(''));
    };
    await runBatch(tasks(), { historyDir: dir, logger: false });
    // Killed after the first answer; resumed, then killed again right after the answer it was served.
    cutAfterFirst((l) => l.includes('"type":"llm"'));
    const once = await runBatch(tasks(), { historyDir: dir, logger: false, resume: true });
    expect(once.runs[0]!.usage.unpricedCalls).toBe(3);
    expect((await readBatchFolder(dir, { onWarning: () => undefined })).totals.unpricedCalls).toBe(3);
    cutAfterFirst((l) => l.includes('"type":"llm"') && l.includes('"fromJournal":true'));
    const twice = await runBatch(tasks(), { historyDir: dir, logger: false, resume: true });
    expect(twice.runs[0]!.usage.unpricedCalls).toBe(3);
    expect((await readBatchFolder(dir, { onWarning: () => undefined })).totals.unpricedCalls).toBe(3);
  });

  it("a batch's report and its folder read back say them, summed over the runs, with why", async () => {
    const agent = () =>
      createScriptedAgent({ sleep: async () => undefined, replies: [{ text: 'ok', usage, model: 'm1' }] });
    const report = await runBatch(
      [
        { id: 'a', input: 'go', agent },
        { id: 'b', input: 'go', agent },
      ],
      { historyDir: dir, logger: false, journal: true },
    );
    expect(report.totals).toMatchObject({ costUsd: 0, unpricedCalls: 2 });
    expect(report.runs.map((r) => r.usage.unpricedCalls)).toEqual([1, 1]);
    expect(formatBatchReport(report)).toContain(
      `Money: $0.0000 billed, and 2 LLM calls of unknown cost (${NO_PRICING})`,
    );
    const folder = await readBatchFolder(dir, { onWarning: () => undefined });
    expect(folder.totals).toMatchObject({ unpricedCalls: 2, unpriced: [{ why: NO_PRICING, calls: 2 }] });
    expect(formatBatchFolder(folder)).toContain(`and 2 LLM calls of unknown cost (${NO_PRICING})`);
  });

  it('a resumed run counts each of them once: served from the journal, in flight when cut, and live', async () => {
    const file = path.join(dir, 't.jsonl');
    // [where the file is cut, the calls of unknown cost in all]: after the first answer (served
    // on resume, the other two live), and after the second call's reserve line (in flight when
    // cut, so it may have been billed: sent again, it is a call of its own).
    const at = (l: string[], type: string, n: number): number =>
      l.flatMap((x, i) => (x.includes(`"type":"${type}"`) ? [i] : []))[n]!;
    for (const [cutAfter, calls] of [
      [(l: string[]) => at(l, 'llm', 0), 3],
      [(l: string[]) => at(l, 'reserve', 1), 4],
    ] as const) {
      await runBatch(threeCalls(), { historyDir: dir, logger: false, overwriteHistory: true });
      const lines = fs.readFileSync(file, 'utf8').split(/(?<=\n)/);
      fs.writeFileSync(file, lines.slice(0, cutAfter(lines) + 1).join(''));
      const report = await runBatch(threeCalls(), { historyDir: dir, logger: false, resume: true });
      expect(report.runs[0]).toMatchObject({ outcome: 'end_of_turn', resumed: 'recovered' });
      expect(report.runs[0]!.usage.unpricedCalls).toBe(calls);
      const folder = await readBatchFolder(dir, { onWarning: () => undefined });
      expect(folder.totals.unpricedCalls).toBe(calls);
    }
  });

  it('a run resumed twice keeps the calls of unknown cost of every attempt', async () => {
    const file = path.join(dir, 't.jsonl');
    const cutAfter = (find: (line: string) => boolean): void => {
      const lines = fs.readFileSync(file, 'utf8').split(/(?<=\n)/);
      const at = lines.flatMap((l, i) => (find(l) ? [i] : []));
      fs.writeFileSync(file, lines.slice(0, at[at.length === 1 ? 0 : 1]! + 1).join(''));
    };
    await runBatch(threeCalls(), { historyDir: dir, logger: false });
    // Attempt 1: one answer, then the second call in flight when cut (2 calls of unknown cost).
    cutAfter((l) => l.includes('"type":"reserve"'));
    await runBatch(threeCalls(), { historyDir: dir, logger: false, resume: true });
    // Attempt 2: cut right after it was served attempt 1's answer, before its records said anything.
    cutAfter((l) => l.includes('"fromJournal":true'));
    const report = await runBatch(threeCalls(), { historyDir: dir, logger: false, resume: true });
    // Attempt 1's two, and attempt 3's two live calls.
    expect(report.runs[0]!.usage.unpricedCalls).toBe(4);
  });

  it('an attempt cut before its records said its own call of unknown cost still counts it, once', async () => {
    const file = path.join(dir, 't.jsonl');
    const cutAfterFirst = (find: (line: string) => boolean): void => {
      const lines = fs.readFileSync(file, 'utf8').split(/(?<=\n)/);
      fs.writeFileSync(file, lines.slice(0, lines.findIndex(find) + 1).join(''));
    };
    await runBatch(threeCalls(), { historyDir: dir, logger: false });
    // Attempt 1: one answer, then the second call in flight when cut (2 calls of unknown cost).
    const reserves = (l: string) => l.includes('"type":"reserve"');
    let seen = 0;
    cutAfterFirst((l) => reserves(l) && ++seen === 2);
    await runBatch(threeCalls(), { historyDir: dir, logger: false, resume: true });
    // Attempt 2: served the answer, made the second call again live, and was cut on its answer's
    // line, before any record counted it: its own call is in its lines alone.
    cutAfterFirst((l) => l.includes('"unpriced"'));
    const report = await runBatch(threeCalls(), { historyDir: dir, logger: false, resume: true });
    // Attempt 1's two, attempt 2's one, attempt 3's one: the most any attempt's records said is 2.
    expect(report.runs[0]!.usage.unpricedCalls).toBe(4);
    const folder = await readBatchFolder(dir, { onWarning: () => undefined });
    expect(folder.totals.unpricedCalls).toBe(4);
  });
});
