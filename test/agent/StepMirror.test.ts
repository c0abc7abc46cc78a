import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { AgentWithStateMachine } from '../../lib/agent/AgentWithStateMachine';
import { createScriptedAgent, type ScriptedReply } from '../../lib/agent/createScriptedAgent';
import { Budget } from '../../lib/agent/money/Budget';
import { StepMirror } from '../../lib/agent/StepMirror';
import { BudgetExceededError, TurnCancelledError } from '../../lib/agent/TurnError';
import { JsonlHistorySink } from '../../lib/history/JsonlHistorySink';
import { loadHistory } from '../../lib/history/loadHistory';
import { validateHistory } from '../../lib/history/validateHistory';
import { manualClock } from '../helpers/manualClock';

const instant = async (): Promise<void> => undefined;

let dir: string;
beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-mirror-'))));
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const toolReply: ScriptedReply = {
  text: 'let me look',
  toolCalls: [{ id: 'c1', name: 'bash', input: { cmd: 'ls' } }],
  usage: { inputTokens: 10, outputTokens: 3, costUsd: 0.01 },
};
const textReply: ScriptedReply = { text: 'two files', usage: { inputTokens: 20, outputTokens: 4, costUsd: 0.02 } };

/** The moves of a history, as `from→to`, and its validation. */
function movesOf(machine: { history(): ReadonlyArray<{ from: string; to: string; forced?: boolean }> }): string[] {
  return machine.history().map((r) => `${r.from}→${r.to}${r.forced === true ? ' (forced)' : ''}`);
}

/** Feeds a mirror what a framework loop over the same script would report. */
async function frameworkLoop(mirror: StepMirror, replies: ScriptedReply[], input = 'list the files'): Promise<void> {
  mirror.runStart(input);
  for (const reply of replies) {
    const stop = await mirror.modelCallStart();
    if (stop !== undefined) return;
    if (reply.error !== undefined) {
      mirror.modelCallFailed(new Error(reply.error), { willRetry: true });
      const retry = await mirror.modelCallStart();
      if (retry !== undefined) return;
    }
    const { text, toolCalls, usage } = reply;
    mirror.modelResponse({ text, toolCalls, usage });
    if (toolCalls === undefined) break;
    for (const call of toolCalls) {
      const refused = await mirror.toolStart(call);
      if (refused !== undefined) mirror.toolEnd(call.id, { error: refused });
      else mirror.toolEnd(call.id, { output: 'ok' });
    }
    mirror.stepEnd();
    if (mirror.spent() !== undefined) break;
  }
  if (mirror.running) mirror.runEnd();
}

describe('StepMirror', () => {
  it('makes the moves a turn of AgentWithStateMachine makes, for a tool round trip', async () => {
    const clock = manualClock();
    const adapter = new AgentWithStateMachine(
      createScriptedAgent({ replies: [toolReply, textReply], sleep: instant }),
      {
        clock: clock.now,
        logger: false,
        sleep: instant,
      },
    );
    const turn = await adapter.runTurn('list the files');
    const mirror = new StepMirror({ clock: clock.now, logger: false });
    await frameworkLoop(mirror, [toolReply, textReply]);
    expect(mirror.result).toMatchObject({ outcome: turn.outcome, text: 'two files', texts: ['let me look'] });
    expect(movesOf(mirror.machine)).toEqual(movesOf(adapter.machine));
    expect(mirror.usage).toMatchObject({ llmCalls: 2, toolCalls: 1, costUsd: 0.03, inputTokens: 30 });
  });

  it('writes a history file with its journal that validates, the same kinds of lines as the adapter', async () => {
    const file = path.join(dir, 'run.jsonl');
    const sink = JsonlHistorySink.open(file, { runId: 'r1' });
    const mirror = new StepMirror({ sink, logger: false, journal: true });
    await frameworkLoop(mirror, [{ ...toolReply, error: 'ECONNRESET' }, textReply]);
    sink.close();
    const history = await loadHistory(file);
    const verdict = validateHistory(history.entries);
    expect(verdict.ok).toBe(true);
    expect(verdict.interrupted).toBeUndefined();
    expect(history.rejected).toHaveLength(0);
    expect(history.journal.map((j) => j.type)).toEqual(['reserve', 'llm', 'reserve', 'llm', 'tool', 'reserve', 'llm']);
    expect(history.journal[1]).toMatchObject({ attempt: 1, error: { message: 'ECONNRESET' } });
    expect(history.journal[3]).toMatchObject({ attempt: 2, costUsd: 0.01 });
  });

  it('stops before the model call that a spent budget forbids: CheckingBudget → BudgetExceeded', async () => {
    const mirror = new StepMirror({ logger: false, budget: { maxCostUsd: 0.01, strict: false } });
    mirror.runStart('go');
    expect(await mirror.modelCallStart()).toBeUndefined();
    mirror.modelResponse(toolReply);
    expect(await mirror.toolStart(toolReply.toolCalls![0]!)).toBeInstanceOf(BudgetExceededError);
    const stop = await mirror.modelCallStart();
    expect(stop).toBeInstanceOf(BudgetExceededError);
    expect(mirror.result).toMatchObject({ outcome: 'budget_exceeded' });
    expect(mirror.machine.current).toBe('BudgetExceeded');
    expect(mirror.result!.unansweredToolCalls).toEqual([
      {
        call: toolReply.toolCalls![0],
        result: { callId: 'c1', output: expect.stringMatching(/^not run: budget/), isError: true },
      },
    ]);
    expect(validateHistory(mirror.machine.history()).ok).toBe(true);
    // Later events of the ended run change nothing.
    expect(mirror.runEnd()).toBe(mirror.result);
    expect(mirror.machine.current).toBe('BudgetExceeded');
  });

  it('refuses the first model call on a spent shared budget: WaitingForUserInput → Error, budget_exceeded', async () => {
    const shared = new Budget({ maxLlmCalls: 0 });
    const mirror = new StepMirror({ logger: false, sharedBudgets: [shared] });
    mirror.runStart('go');
    expect(await mirror.modelCallStart()).toBeInstanceOf(BudgetExceededError);
    expect(mirror.result).toMatchObject({ outcome: 'budget_exceeded' });
    expect(movesOf(mirror.machine)).toEqual(['Ready→WaitingForUserInput', 'WaitingForUserInput→Error']);
  });

  it('a cancel mid-tool ends in Cancelled, forced with the reason, the running call interrupted', async () => {
    const mirror = new StepMirror({ logger: false, journal: false });
    mirror.runStart('go');
    await mirror.modelCallStart();
    mirror.modelResponse(toolReply);
    expect(await mirror.toolStart(toolReply.toolCalls![0]!)).toBeUndefined();
    mirror.cancel('user pressed stop');
    expect(mirror.signal.aborted).toBe(true);
    mirror.toolEnd('c1', { error: new Error('aborted') });
    const result = mirror.runAborted();
    expect(result.outcome).toBe('cancelled');
    expect(result.error).toBeInstanceOf(TurnCancelledError);
    const last = mirror.machine.history().at(-1)!;
    expect(last).toMatchObject({ from: 'RunningTool', to: 'Cancelled', forced: true });
    expect(last.description).toContain('user pressed stop');
    expect(validateHistory(mirror.machine.history()).ok).toBe(true);
    // The next run gets a fresh signal.
    mirror.runStart('again');
    expect(mirror.signal.aborted).toBe(false);
  });

  it('records each attempt of a call the framework retried, and the failures on the response', async () => {
    const mirror = new StepMirror({ logger: false });
    mirror.runStart('go');
    await mirror.modelCallStart();
    mirror.modelCallFailed(new Error('429 rate limited'), { willRetry: true });
    await mirror.modelCallStart();
    mirror.modelResponse(textReply);
    mirror.runEnd();
    const response = mirror.machine.history().find((r) => r.to === 'ProcessingLLMResponse')!;
    expect(response.data).toMatchObject({ attempts: 2, failures: [{ attempt: 1, error: '429 rate limited' }] });
    expect(mirror.usage.llmCalls).toBe(2);
  });

  it('answers a call the framework makes again with the response its journal line holds, reporting nothing', async () => {
    const mirror = new StepMirror({ logger: false });
    mirror.runStart('go');
    await mirror.modelCallStart();
    mirror.modelResponse(toolReply);
    expect(mirror.callsAnswered).toBe(1);
    const moves = mirror.machine.history().length;
    const usage = mirror.usage;
    expect(mirror.recordedResponse({ again: 1 })).toEqual(toolReply);
    // No request, no charge, no move, no new call: it was answered once.
    expect(mirror.machine.history()).toHaveLength(moves);
    expect(mirror.usage).toEqual(usage);
    expect(mirror.callsAnswered).toBe(1);
    // A call the run has not made: none to repeat, the framework makes it live.
    expect(mirror.recordedResponse({ again: 2 })).toBeUndefined();
    expect(() => mirror.recordedResponse({ again: 0 })).toThrow(/again.*1 for its first.*got `0`/);
    mirror.runEnd();
    expect(mirror.recordedResponse({ again: 1 })).toBeUndefined();
  });
});
