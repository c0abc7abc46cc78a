import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { AgentWithStateMachine } from '../../lib/agent/AgentWithStateMachine';
import { createScriptedAgent, type ScriptedReply } from '../../lib/agent/createScriptedAgent';
import { main } from '../../lib/cli/main';
import { JsonlHistorySink } from '../../lib/history/JsonlHistorySink';
import { loadHistory } from '../../lib/history/loadHistory';
import { ReplayDivergedError } from '../../lib/replay/ReplayDivergedError';
import { replayLoop } from '../../lib/replay/replayLoop';
import { replayRun } from '../../lib/replay/replayRun';
import { manualClock } from '../helpers/manualClock';

const instant = async (): Promise<void> => undefined;

let dir: string;
beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-replay-'))));
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Records turns of a scripted agent, journal on, and returns the file. */
async function record(
  replies: ScriptedReply[],
  inputs = ['fix the bug'],
  tools: Parameters<typeof createScriptedAgent>[0]['tools'] = { bash: { output: 'ok' }, fail: { error: 'exit 1' } },
): Promise<string> {
  const file = path.join(dir, `run-${Math.random().toString(36).slice(2)}.jsonl`);
  const sink = JsonlHistorySink.open(file, { runId: 'r' });
  const agent = new AgentWithStateMachine(createScriptedAgent({ sleep: instant, replies, tools }), {
    sink,
    journal: true,
    logger: false,
    clock: manualClock().now,
    sleep: instant,
    retry: { retries: 2 },
  });
  for (const input of inputs) await agent.runTurn(input);
  sink.close();
  return file;
}

const CALL_COST = { inputTokens: 100, outputTokens: 20, costUsd: 0.01 };

describe('replayRun', () => {
  it('reproduces a run with retries, tools and two turns, answering everything from the journal', async () => {
    const file = await record(
      [
        { error: 'overloaded' },
        {
          toolCalls: [
            { id: 'c1', name: 'bash' },
            { id: 'c2', name: 'fail' },
          ],
          usage: CALL_COST,
        },
        { text: 'one tool failed', usage: CALL_COST },
        { text: 'second turn', usage: CALL_COST },
      ],
      ['first', 'second'],
    );
    const report = await replayRun(await loadHistory(file));
    expect(report).toMatchObject({ reproduced: true, outcomes: ['end_of_turn', 'end_of_turn'], llmCalls: 4 });
    expect(report.usage).toMatchObject({ llmCalls: 4, toolCalls: 2, costUsd: 0.03 });
    expect(report.recordedMoves).toBe(report.replayedMoves);
  });

  it('reproduces a failed run: the LLM failing on every attempt', async () => {
    const file = await record([{ error: 'overloaded' }, { error: 'overloaded' }, { error: 'overloaded' }]);
    const loaded = await loadHistory(file);
    expect(loaded.records.at(-1)!.to).toBe('Error');
    expect(await replayRun(loaded)).toMatchObject({ reproduced: true, outcomes: ['error'], llmCalls: 3 });
  });

  it('shows where the run would have stopped under other limits', async () => {
    const file = await record([
      { toolCalls: [{ id: 'c1', name: 'bash' }], usage: CALL_COST },
      { toolCalls: [{ id: 'c2', name: 'bash' }], usage: CALL_COST },
      { text: 'done', usage: CALL_COST },
    ]);
    const report = await replayRun(await loadHistory(file), { budget: { maxCostUsd: 0.015, strict: false } });
    expect(report.outcomes).toEqual(['budget_exceeded']);
    expect(report.stoppedBy?.move).toMatchObject({
      to: 'BudgetExceeded',
      description: 'budget exceeded: $0.0200 of $0.0150 after 2 LLM calls',
    });
    expect(report.usage.costUsd).toBe(0.02);
    await expect(replayRun(await loadHistory(file), { budget: { maxWallMs: 5 } })).rejects.toThrow(
      'Expected `options.budget.maxWallMs` to be left out',
    );
  });

  it('says where a run diverges from its journal', async () => {
    const file = await record([{ toolCalls: [{ id: 'c1', name: 'bash' }] }, { text: 'done' }]);
    const loaded = await loadHistory(file);
    const edited = loaded.journal.map((j) =>
      j.type === 'tool' ? { ...j, result: { callId: 'c1', output: 'something else' } } : j,
    );
    // The replayed tool answers differently from the recorded result the next LLM call carried.
    const report = await replayRun({ records: loaded.records, journal: edited });
    expect(report.reproduced).toBe(false);
    expect(report.diverged).toBe(
      'diverged at LLM call 2: tool result 1 (c1) differs: recorded "ok", sent "something else"',
    );
  });

  it('needs a journal', async () => {
    const file = path.join(dir, 'plain.jsonl');
    const sink = JsonlHistorySink.open(file);
    await new AgentWithStateMachine(createScriptedAgent({ replies: [{ text: 'x' }] }), { sink, logger: false }).runTurn(
      'x',
    );
    sink.close();
    await expect(replayRun(await loadHistory(file))).rejects.toThrow(
      'Expected `journal` to be a journal with at least one LLM call (was the run written with journal: true?)',
    );
  });

  it('reproduces every scripted run it is given (property-based)', async () => {
    const reply = fc.oneof(
      fc.constant<ScriptedReply>({ text: 'done', usage: CALL_COST }),
      fc.constant<ScriptedReply>({ error: 'overloaded' }),
      fc.constantFrom('bash', 'fail').chain((name) =>
        fc.integer({ min: 1, max: 3 }).map((n): ScriptedReply => ({
          toolCalls: Array.from({ length: n }, (_, i) => ({ id: `c${i}`, name })),
          usage: CALL_COST,
        })),
      ),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(reply, { minLength: 1, maxLength: 8 }),
        fc.integer({ min: 1, max: 2 }),
        async (replies, turns) => {
          const file = await record(
            [...replies, { text: 'end' }, { text: 'end' }],
            Array.from({ length: turns }, (_, i) => `turn ${i + 1}`),
          );
          const report = await replayRun(await loadHistory(file));
          expect(report.firstDifference).toBeUndefined();
          expect(report.reproduced).toBe(true);
        },
      ),
      { numRuns: 40 },
    );
  });
});

describe('replayLoop', () => {
  it('serves recorded responses to code that drives it, and stops with ReplayDivergedError on another request', async () => {
    const file = await record([{ text: 'hello', usage: CALL_COST }]);
    const { loop, inputs } = replayLoop((await loadHistory(file)).journal);
    expect(inputs).toEqual(['fix the bug']);
    const signal = new AbortController().signal;
    await expect(loop.sendUserMessage('something else', { signal, turn: 1 })).rejects.toThrow(ReplayDivergedError);
    await expect(loop.sendUserMessage('something else', { signal, turn: 1 })).rejects.toThrow(
      'diverged at LLM call 1: the user message differs: recorded "fix the bug", asked "something else"',
    );
    expect(await loop.sendUserMessage('fix the bug', { signal, turn: 1 })).toMatchObject({ text: 'hello' });
  });
});

describe('agent-sm replay', () => {
  const run = async (argv: string[]): Promise<{ code: number; out: string; err: string }> => {
    let out = '';
    let err = '';
    const code = await main(argv, { stdout: (t) => void (out += t), stderr: (t) => void (err += t) });
    return { code, out, err };
  };

  it('says the run reproduced, and where limits would have stopped it', async () => {
    const file = await record([
      { toolCalls: [{ id: 'c1', name: 'bash' }], usage: CALL_COST },
      { text: 'done', usage: CALL_COST },
    ]);
    const same = await run(['replay', file]);
    expect(same.code).toBe(0);
    expect(same.out).toBe(
      `Replay of ${file}: 2 LLM calls answered from the journal, no request made, no tool run.\nReproduced: the same 12 moves, in order.\n`,
    );
    const capped = await run(['replay', file, '--budget', 'maxLlmCalls=1']);
    expect(capped.code).toBe(0);
    expect(capped.out).toContain(
      'Under these limits the run would have stopped at move 9 of 12: CheckingBudget → BudgetExceeded: budget exceeded: 1 of 1 LLM call',
    );
    // The limit was spent before the tool could start: it never ran.
    expect(capped.out).toContain('It would have spent $0.0100 (120 tokens, 1 LLM call, 0 tool calls).');
    const bad = await run(['replay', file, '--budget', 'maxCostUsd=lots']);
    expect(bad.code).toBe(2);
    expect(bad.err).toContain(
      'expected limit=value with a non-negative number (e.g. maxCostUsd=0.10), got "maxCostUsd=lots"',
    );
  });
});

describe('every reader takes a journaled file', () => {
  it('inspect, validate, report, export otlp and replay all read it', async () => {
    const file = await record([
      { toolCalls: [{ id: 'c1', name: 'bash' }], usage: CALL_COST },
      { text: 'done', usage: CALL_COST },
    ]);
    const io = { stdout: () => undefined, stderr: (t: string) => void errors.push(t) };
    const errors: string[] = [];
    for (const argv of [
      ['inspect', file],
      ['validate', file],
      ['report', file, '-o', path.join(dir, 'r.html')],
      ['export', 'otlp', file, '-o', path.join(dir, 'o.json')],
      ['replay', file],
    ]) {
      expect({ argv, code: await main(argv, io) }).toEqual({ argv, code: 0 });
    }
    expect(errors.filter((e) => !e.startsWith('agent-sm: wrote'))).toEqual([]);
    const otlp = JSON.parse(fs.readFileSync(path.join(dir, 'o.json'), 'utf8')) as {
      resourceSpans: Array<{ scopeSpans: Array<{ spans: unknown[] }> }>;
    };
    expect(otlp.resourceSpans[0]!.scopeSpans[0]!.spans.length).toBeGreaterThan(0);
  });
});

describe('replayRun of an answer the loop refused (answeredUsage)', () => {
  it('charges it again at the cost it was recorded at, as the run was charged', async () => {
    const file = path.join(dir, 'refused.jsonl');
    const sink = JsonlHistorySink.open(file, { runId: 'r' });
    const scripted = createScriptedAgent({ sleep: instant, replies: [] });
    const refused = Object.assign(new Error('refused'), {
      status: 400,
      answeredUsage: { inputTokens: 100, outputTokens: 20 },
      model: 'm',
    });
    const agent = new AgentWithStateMachine(
      { ...scripted, sendUserMessage: () => Promise.reject(refused) },
      {
        sink,
        journal: true,
        logger: false,
        clock: manualClock().now,
        sleep: instant,
        pricing: (u) => ((u.inputTokens ?? 0) + (u.outputTokens ?? 0)) * 1e-4,
      },
    );
    const ran = await agent.runTurn('go');
    sink.close();
    expect(ran.usage).toMatchObject({ inputTokens: 100, outputTokens: 20, costUsd: 0.012, releasedUsd: 0 });
    const replay = await replayRun(await loadHistory(file));
    expect(replay.reproduced).toBe(true);
    expect(replay.usage).toMatchObject({ inputTokens: 100, outputTokens: 20, costUsd: 0.012, releasedUsd: 0 });
  });
});
