// The money ledger on a framework's loop: the mirror writes the same write-ahead `reserve` line
// the adapter writes, before each model call, in the file before the framework's request can
// leave; a file cut after it counts the call at its worst case, as the adapter's does.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { JsonlHistorySink, loadHistory, runFacts, validateHistory } from '../../lib/subpaths/history';
import { runBatch, StepMirror, type Pricing } from '../../lib/index';
import { manualClock } from '../helpers/manualClock';

const pricing: Pricing = (u) => (u.inputTokens ?? 0) * 1e-6 + (u.outputTokens ?? 0) * 4e-6;
const bound = { inputTokens: 1000, maxOutputTokens: 500, model: 'm' };

let dir: string;
beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-mirror-ledger-'))));
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const lines = (file: string): Array<Record<string, unknown>> =>
  fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

/** A framework's loop of two model calls and one tool, reporting to the mirror; `seen` gets the file at each request. */
async function frameworkLoop(mirror: StepMirror, file: string, seen: Array<Array<Record<string, unknown>>>) {
  mirror.runStart('go');
  expect(await mirror.modelCallStart(bound)).toBeUndefined();
  seen.push(lines(file));
  mirror.modelResponse({
    text: 'look',
    toolCalls: [{ id: 'c1', name: 'bash', input: {} }],
    usage: { inputTokens: 900, outputTokens: 100 },
  });
  expect(await mirror.toolStart({ id: 'c1', name: 'bash', input: {} })).toBeUndefined();
  mirror.toolEnd('c1', { output: 'ok' });
  expect(await mirror.modelCallStart(bound)).toBeUndefined();
  seen.push(lines(file));
  mirror.modelResponse({ text: 'done', usage: { inputTokens: 950, outputTokens: 50 } });
  return mirror.runEnd();
}

describe('the money ledger on a framework loop', () => {
  it.each([
    ['with the journal', { journal: true }],
    ['without it', { ledger: true }],
  ])(
    'the reserve line is in the file before each request leaves (%s), even with group commit and durability none',
    async (_, mode) => {
      const file = path.join(dir, 'run.jsonl');
      const sink = JsonlHistorySink.open(file, { runId: 'r', durability: 'none', groupCommit: true });
      const clock = manualClock();
      const mirror = new StepMirror({ sink, clock: clock.now, logger: false, pricing, ledger: true, ...mode });
      const seen: Array<Array<Record<string, unknown>>> = [];
      expect((await frameworkLoop(mirror, file, seen)).outcome).toBe('end_of_turn');
      sink.close();
      for (const [i, operation] of ['sendUserMessage', 'sendToolResults'].entries()) {
        expect(seen[i]!.at(-1)).toMatchObject({
          type: 'reserve',
          turn: 1,
          operation,
          attempt: 1,
          maxCostUsd: 0.003,
          bound,
        });
      }
      const history = await loadHistory(file);
      expect(history.journal.map((j) => j.type)).toEqual(
        'journal' in mode ? ['reserve', 'llm', 'tool', 'reserve', 'llm'] : ['reserve', 'llm', 'reserve', 'llm'],
      );
      expect(history.journal[1]).toMatchObject({ costUsd: 0.0013, ...('journal' in mode ? {} : { ledgerOnly: true }) });
      if (!('journal' in mode)) expect(history.journal[1]).not.toHaveProperty('response');
      expect(validateHistory(history.entries).issues).toEqual([]);
      expect(runFacts(history.entries).spend).toEqual({
        costUsd: 0.00245,
        uncertainUsd: 0,
        releasedUsd: 0,
        uncertain: [],
        openReservations: 0,
        unpricedReservations: 0,
        unpricedCalls: 0,
        unpriced: [],
        ledger: true,
      });
    },
  );

  it('a call with no bound gets a reserve line that says why it states no amount', async () => {
    const file = path.join(dir, 'run.jsonl');
    const sink = JsonlHistorySink.open(file, { runId: 'r' });
    const mirror = new StepMirror({ sink, logger: false, ledger: true });
    mirror.runStart('go');
    await mirror.modelCallStart();
    mirror.modelResponse({ text: 'hi', usage: { inputTokens: 1, outputTokens: 1, costUsd: 0.5 } });
    mirror.runEnd();
    sink.close();
    const reserve = (await loadHistory(file)).journal[0];
    expect(reserve).toMatchObject({
      type: 'reserve',
      unknown: 'the framework gave modelCallStart no bound for this call',
    });
    expect(reserve).not.toHaveProperty('maxCostUsd');
  });

  it('a framework batch with ledger: true whose file is cut after a reserve line counts that call at its worst case', async () => {
    const report = await runBatch(
      [
        {
          id: 'fw',
          drive: async (mirror) => {
            await mirror.modelCallStart(bound);
            mirror.modelResponse({
              text: 'look',
              toolCalls: [{ id: 'c1', name: 'bash', input: {} }],
              usage: { inputTokens: 900, outputTokens: 100 },
            });
            await mirror.toolStart({ id: 'c1', name: 'bash', input: {} });
            mirror.toolEnd('c1', { output: 'ok' });
            await mirror.modelCallStart(bound);
            mirror.modelResponse({ text: 'done', usage: { inputTokens: 950, outputTokens: 50 } });
          },
        },
      ],
      { historyDir: dir, ledger: true, pricing, logger: false },
    );
    expect(report.runs[0]!.outcome).toBe('end_of_turn');
    const file = path.join(dir, 'fw.jsonl');
    const all = fs.readFileSync(file, 'utf8').split('\n');
    const reserves = all.flatMap((l, i) => (l.includes('"type":"reserve"') ? [i] : []));
    expect(reserves).toHaveLength(2);
    // A kill right after the second reserve line reached the disk.
    fs.writeFileSync(file, `${all.slice(0, reserves[1]! + 1).join('\n')}\n`);
    expect(runFacts((await loadHistory(file)).entries).spend).toEqual({
      costUsd: 0.0043,
      uncertainUsd: 0.003,
      releasedUsd: 0,
      uncertain: [{ why: 'reserved, and no response recorded (in flight when the file ended)', calls: 1 }],
      openReservations: 1,
      unpricedReservations: 0,
      unpricedCalls: 0,
      unpriced: [],
      ledger: true,
    });
  });
});
