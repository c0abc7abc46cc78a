import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { AgentWithStateMachine, createScriptedAgent, runBatch, type AgentLoop, type Pricing } from '../../lib/index';
import { buildHtmlReport } from '../../lib/subpaths/report';
import { JsonlHistorySink, loadHistory, runFacts, validateHistory } from '../../lib/subpaths/history';
import { manualClock } from '../helpers/manualClock';

const instant = async (): Promise<void> => undefined;
const pricing: Pricing = (u) => (u.inputTokens ?? 0) * 1e-6 + (u.outputTokens ?? 0) * 4e-6;
const bound = { inputTokens: 1000, maxOutputTokens: 500, model: 'm' };

let dir: string;
beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-ledger-'))));
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

function lines(file: string): Array<Record<string, unknown>> {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('the money ledger', () => {
  it('the reserve line is in the file before the loop is called, even with group commit and durability none', async () => {
    const file = path.join(dir, 'run.jsonl');
    const sink = JsonlHistorySink.open(file, { runId: 'r', durability: 'none', groupCommit: true });
    const scripted = createScriptedAgent({
      sleep: instant,
      bound,
      replies: [
        { text: 'look', toolCalls: [{ id: 'c1', name: 'bash' }], usage: { inputTokens: 900, outputTokens: 100 } },
        { text: 'done', usage: { inputTokens: 950, outputTokens: 50 } },
      ],
      tools: { bash: { output: 'ok' } },
    });
    // What the file holds at the moment each LLM call starts.
    const seen: Array<Array<Record<string, unknown>>> = [];
    const loop: AgentLoop = {
      ...scripted,
      llmCallBound: scripted.llmCallBound!,
      sendUserMessage: (m, ctx) => (seen.push(lines(file)), scripted.sendUserMessage(m, ctx)),
      sendToolResults: (r, m, ctx) => (seen.push(lines(file)), scripted.sendToolResults(r, m, ctx)),
    };
    const clock = manualClock();
    const agent = new AgentWithStateMachine(loop, { sink, clock: clock.now, logger: false, pricing, journal: true });
    expect((await agent.runTurn('go')).outcome).toBe('end_of_turn');
    sink.close();
    expect(seen).toHaveLength(2);
    for (const [i, operation] of ['sendUserMessage', 'sendToolResults'].entries()) {
      const last = seen[i]!.at(-1)!;
      // $0.001 of input and $0.002 of output at most.
      expect(last).toEqual({
        type: 'reserve',
        seq: i === 0 ? 2 : 10,
        turn: 1,
        operation,
        attempt: 1,
        at: clock.now(),
        maxCostUsd: 0.003,
        bound,
      });
    }
    const history = await loadHistory(file);
    expect(history.journal.map((j) => j.type)).toEqual(['reserve', 'llm', 'tool', 'reserve', 'llm']);
    expect(history.journal[1]).toMatchObject({ costUsd: 0.0013 });
    expect(validateHistory(history.entries)).toEqual({ ok: true, records: 12, issues: [] });
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
  });

  it('ledger: true keeps the money record without content; an unknown worst case states the default, or no amount', async () => {
    for (const ledgerDefaultMaxCostUsd of [0.05, undefined]) {
      const file = path.join(dir, `run-${String(ledgerDefaultMaxCostUsd)}.jsonl`);
      const sink = JsonlHistorySink.open(file, { runId: 'r' });
      // No llmCallBound: the worst case is unknown.
      const agent = new AgentWithStateMachine(
        createScriptedAgent({
          sleep: instant,
          replies: [{ text: 'secret answer', usage: { inputTokens: 10, outputTokens: 5, costUsd: 0.01 } }],
        }),
        {
          sink,
          logger: false,
          ledger: true,
          ...(ledgerDefaultMaxCostUsd === undefined ? {} : { ledgerDefaultMaxCostUsd }),
        },
      );
      await agent.runTurn('a secret question');
      sink.close();
      const text = fs.readFileSync(file, 'utf8');
      expect(text).not.toContain('secret');
      const journal = lines(file).filter((l) => l.type === 'reserve' || l.type === 'llm');
      expect(journal[0]).toMatchObject({
        type: 'reserve',
        ...(ledgerDefaultMaxCostUsd === undefined ? {} : { maxCostUsd: 0.05, defaulted: true }),
        unknown: 'the loop has no llmCallBound',
      });
      if (ledgerDefaultMaxCostUsd === undefined) expect(journal[0]).not.toHaveProperty('maxCostUsd');
      expect(journal[1]).toMatchObject({
        type: 'llm',
        ledgerOnly: true,
        costUsd: 0.01,
        usage: { inputTokens: 10, outputTokens: 5, costUsd: 0.01 },
      });
      expect(journal[1]).not.toHaveProperty('input');
      expect(journal[1]).not.toHaveProperty('response');
    }
  });

  it('a file cut right after a reserve line: spend counts the reservation at its worst case, and resume starts from it', async () => {
    const file = path.join(dir, 'a.jsonl');
    const agent = () =>
      createScriptedAgent({
        sleep: instant,
        bound,
        replies: [
          { text: 'look', toolCalls: [{ id: 'c1', name: 'bash' }], usage: { inputTokens: 900, outputTokens: 100 } },
          { text: 'done', usage: { inputTokens: 950, outputTokens: 50 } },
        ],
        tools: { bash: { output: 'ok' } },
      });
    await runBatch([{ id: 'a', input: 'x', agent }], { historyDir: dir, ledger: true, pricing, logger: false });
    const all = fs.readFileSync(file, 'utf8').split('\n');
    const secondReserve = all.findIndex(
      (l, i) => i > all.findIndex((x) => x.includes('"reserve"')) && l.includes('"reserve"'),
    );
    fs.writeFileSync(file, `${all.slice(0, secondReserve + 1).join('\n')}\n`);
    const history = await loadHistory(file);
    // $0.0013 recorded for the first call, $0.003 at most for the second, unanswered.
    expect(runFacts(history.entries).spend).toEqual({
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
    expect(runFacts(history.entries).finalUsage!.costUsd).toBe(0.0013);
    // The run's page says it too.
    expect((await buildHtmlReport(file)).html).toContain(
      'Spent by the ledger: $0.0043, counting 1 LLM call reserved without a response at its worst case',
    );
    // The resumed batch's shared budget starts from the ledger's spend.
    const resumed = await runBatch([{ id: 'a', input: 'x', agent }], {
      historyDir: dir,
      resume: true,
      ledger: true,
      pricing,
      logger: false,
      total: { maxCostUsd: 0.0045, strict: true },
    });
    // $0.0002 left after the $0.0043: not even the floor's worst case fits, so the restarted run makes no call.
    expect(resumed.runs[0]!.outcome).toBe('budget_exceeded');
  });

  it('validateHistory flags a reserve line out of place, as it does journal lines', async () => {
    const file = path.join(dir, 'run.jsonl');
    const sink = JsonlHistorySink.open(file, { runId: 'r' });
    const agent = new AgentWithStateMachine(
      createScriptedAgent({
        sleep: instant,
        bound,
        replies: [{ text: 'hi', usage: { inputTokens: 1, outputTokens: 1 } }],
      }),
      { sink, logger: false, pricing, ledger: true },
    );
    await agent.runTurn('go');
    sink.close();
    fs.writeFileSync(
      file,
      fs.readFileSync(file, 'utf8').replace('"type":"reserve","seq":2', '"type":"reserve","seq":7'),
    );
    const result = validateHistory((await loadHistory(file)).entries);
    expect(result.issues).toEqual([
      expect.objectContaining({
        code: 'journal_out_of_place',
        expected: 2,
        seq: 7,
        message: 'the reserve journal line says it follows record 7, but it follows record 2',
      }),
    ]);
  });
});
