import fc from 'fast-check';
import type { HistoryItem } from '../../lib/history/HistoryEntry';
import { runFacts, type RunFacts } from '../../lib/history/runFacts';
import { summarizeHistory } from '../../lib/history/summarizeHistory';
import { extendTable } from '../../lib/machine/extendTable';
import type { TransitionRecord } from '../../lib/machine/TransitionRecord';
import { DEFAULT_TABLE } from '../../lib/machine/transitions';
import { T0 } from '../fixtures/agentRun';

// How a generated turn goes; each ends the way the adapter ends such a turn.
type TurnPlan =
  | { kind: 'text'; retried: boolean }
  | {
      kind: 'tools';
      rounds: number;
      end: 'text' | 'llm_error' | 'tool_error' | 'cancelled' | 'over_budget' | 'deadline';
    }
  | { kind: 'llm_error' }
  | { kind: 'spent_at_start' }
  | { kind: 'cancelled_at_start' };

const turnPlan: fc.Arbitrary<TurnPlan> = fc.oneof(
  fc.record({ kind: fc.constant('text' as const), retried: fc.boolean() }),
  fc.record({
    kind: fc.constant('tools' as const),
    rounds: fc.integer({ min: 1, max: 3 }),
    end: fc.constantFrom(
      'text' as const,
      'llm_error' as const,
      'tool_error' as const,
      'cancelled' as const,
      'over_budget' as const,
      'deadline' as const,
    ),
  }),
  fc.constant({ kind: 'llm_error' as const }),
  fc.constant({ kind: 'spent_at_start' as const }),
  fc.constant({ kind: 'cancelled_at_start' as const }),
);

interface Run {
  /** As a file written before terminal records carried them: no `outcome` (except where the state cannot say it), no `usage`. */
  old: HistoryItem[];
  /** The same moves as the writer that records them writes them: every terminal record has both. */
  fresh: HistoryItem[];
}

/**
 * Writes a run both ways. Usage grows only where a record says so (each response, and the
 * budget check after tools), so that the records before a turn's end know all it spent: that
 * is when the derivation can agree with the recorded fields. Wall time grows everywhere, as
 * it does; the facts leave it out.
 */
function writeRun(plans: readonly TurnPlan[], resets: readonly boolean[], cut: number | undefined): Run {
  const old: HistoryItem[] = [];
  const fresh: HistoryItem[] = [];
  let seq = 0;
  let at = T0;
  let state = 'Ready';
  const u = { inputTokens: 0, outputTokens: 0, costUsd: 0, toolCalls: 0, llmCalls: 0, wallMs: 0 };
  const move = (to: string, data?: Record<string, unknown>, terminal?: { outcome: string }): void => {
    seq += 1;
    at += 7;
    u.wallMs += 7;
    const base = { seq, from: state, to, description: `${state} → ${to}`, at, durationMs: 7, forced: false };
    const record: TransitionRecord<string> = data === undefined ? base : { ...base, data };
    old.push(record);
    fresh.push(
      terminal === undefined ? record : { ...base, data: { ...data, outcome: terminal.outcome, usage: { ...u } } },
    );
    state = to;
  };
  const respond = (retried: boolean): void => {
    u.inputTokens += 100 + seq;
    u.outputTokens += 10;
    u.costUsd += 0.25;
    u.llmCalls += 1;
    move('ProcessingLLMResponse', {
      attempts: retried ? 2 : 1,
      ...(retried ? { failures: [{ attempt: 1, error: '529' }] } : {}),
      usage: { ...u },
    });
  };
  plans.forEach((plan, i) => {
    if (i > 0 && resets[i] === true) {
      const marker: HistoryItem = { kind: 'reset', line: 0, reset: { type: 'reset', from: state, at, seq } };
      old.push(marker);
      fresh.push(marker);
      state = 'Ready';
    }
    move('WaitingForUserInput', state === 'Ready' ? undefined : { turn: i + 1 });
    if (plan.kind === 'spent_at_start')
      return move('Error', { outcome: 'budget_exceeded', limit: 'maxCostUsd' }, { outcome: 'budget_exceeded' });
    if (plan.kind === 'cancelled_at_start')
      return move('Error', { outcome: 'cancelled', reason: 'aborted' }, { outcome: 'cancelled' });
    move('SendingToLLM', { turn: i + 1 });
    if (plan.kind === 'llm_error')
      return move(
        'Error',
        { operation: 'sendUserMessage', failures: [{ attempt: 1, error: 'boom' }] },
        { outcome: 'error' },
      );
    respond(plan.kind === 'text' && plan.retried);
    if (plan.kind === 'text') return move('EndOfTurn', { chars: 3 }, { outcome: 'end_of_turn' });
    for (let round = 1; ; round++) {
      const last = round === plan.rounds;
      move('ToolUseRequested', { calls: [{ id: `c${seq}`, name: 'bash' }] });
      move('CheckingForCancellation');
      if (last && plan.end === 'cancelled')
        return move('Cancelled', { reason: 'user pressed Esc' }, { outcome: 'cancelled' });
      move('RunningTool');
      if (last && plan.end === 'tool_error') return move('Error', { operation: 'runTool' }, { outcome: 'error' });
      move('CheckingGitCommits', { results: [{ name: 'bash', ms: 3 }] });
      move('CheckingBudget');
      if (last && plan.end === 'over_budget')
        return move(
          'BudgetExceeded',
          { limit: 'maxCostUsd', used: u.costUsd, max: 0.1 },
          { outcome: 'budget_exceeded' },
        );
      if (last && plan.end === 'deadline')
        return move(
          'BudgetExceeded',
          { outcome: 'budget_exceeded', limit: 'maxWallMs' },
          { outcome: 'budget_exceeded' },
        );
      u.toolCalls += 1;
      move('GatheringAdditionalMessages', { usage: { ...u } });
      move('SendingToolResults');
      if (last && plan.end === 'llm_error')
        return move('Error', { operation: 'sendToolResults' }, { outcome: 'error' });
      respond(false);
      if (last) return move('EndOfTurn', { chars: 3 }, { outcome: 'end_of_turn' });
    }
  });
  // A run killed mid-way: its file stops at any line.
  return cut === undefined ? { old, fresh } : { old: old.slice(0, cut), fresh: fresh.slice(0, cut) };
}

const run = fc
  .record({
    plans: fc.array(turnPlan, { minLength: 0, maxLength: 6 }),
    resets: fc.array(fc.boolean(), { maxLength: 6 }),
    cut: fc.option(fc.nat({ max: 120 }), { nil: undefined }),
  })
  .map(({ plans, resets, cut }) => writeRun(plans, resets, cut));

const ZERO = { costUsd: 0, inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, llmCalls: 0, toolCalls: 0 };

/**
 * The facts with what only the recorded fields can add set aside: which outcomes were read, the
 * failing move's data, and that a turn ending before any call spent nothing (recorded: zero;
 * derived: no usage known, null).
 */
function comparable(facts: RunFacts): unknown {
  const { failingMove } = facts;
  return {
    ...facts,
    turns: facts.turns.map((t) => ({ ...t, recorded: undefined, usage: t.usage ?? ZERO })),
    failingMove: failingMove === null ? null : { ...failingMove, data: undefined },
    finalUsage: facts.finalUsage ?? ZERO,
  };
}

describe('runFacts() properties', () => {
  it('runFacts() gives the same facts from records that carry outcome and usage as from the same records without them', () => {
    fc.assert(
      fc.property(run, ({ old, fresh }) => {
        const recorded = runFacts(fresh);
        expect(comparable(recorded)).toEqual(comparable(runFacts(old)));
        // And they were read, not derived: every finished turn of the new file says its outcome.
        expect(recorded.turns.filter((t) => t.end === 'terminal').every((t) => t.recorded)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('runFacts() cuts a run into the turns summarizeHistory cuts it into, for any table and any records', () => {
    const table = extendTable(DEFAULT_TABLE, {
      states: [
        { name: 'Paused', description: 'a custom terminal state', next: ['WaitingForUserInput'], isTerminal: true },
        { name: 'constructor', description: 'a name Object.prototype has', next: ['Error'] },
      ],
      edges: [
        ['SendingToLLM', 'Paused'],
        ['WaitingForUserInput', 'constructor'],
      ],
    });
    const names = Object.keys(table.states);
    const record = fc.record({
      from: fc.constantFrom(...names, 'Nowhere'),
      to: fc.constantFrom(...names, 'Nowhere'),
      data: fc.option(
        fc.record(
          { outcome: fc.constantFrom('end_of_turn', 'error', 'budget_exceeded', 'cancelled', 'weird', '') },
          { requiredKeys: [] },
        ),
        { nil: undefined },
      ),
      reset: fc.boolean(),
    });
    fc.assert(
      fc.property(fc.array(record, { maxLength: 40 }), fc.boolean(), (moves, custom) => {
        const items: HistoryItem[] = [];
        moves.forEach(({ from, to, data, reset }, i) => {
          if (reset) items.push({ kind: 'reset', line: 0, reset: { type: 'reset', from, at: T0, seq: i } });
          items.push({
            seq: i + 1,
            from,
            to,
            description: '',
            at: T0 + i,
            durationMs: 1,
            forced: false,
            ...(data === undefined ? {} : { data }),
          });
        });
        const options = custom ? { table } : {};
        const facts = runFacts(items, options);
        const summary = summarizeHistory(items, { ...options, listLimit: 1000 });
        expect(facts.turns.map((t) => [t.turn, t.firstSeq, t.lastSeq, t.end, t.state])).toEqual(
          summary.turns.list.map((t) => [t.turn, t.firstSeq, t.lastSeq, t.end, t.outcome]),
        );
        expect(
          facts.failingMove === null ? null : [facts.failingMove.seq, facts.failingMove.to, facts.failingMove.turn],
        ).toEqual(summary.failure === null ? null : [summary.failure.seq, summary.failure.state, summary.failure.turn]);
        const status =
          facts.outcome === 'empty' || facts.outcome === 'incomplete'
            ? facts.outcome
            : summary.failure !== null
              ? 'failed'
              : 'ok';
        expect(status).toBe(summary.status);
        // The standsFor a summary shows is the recorded outcome, where the state alone would say another.
        for (const [i, t] of summary.turns.list.entries())
          if (t.standsFor !== undefined) expect(facts.turns[i]!.outcome).toBe(t.standsFor);
      }),
      { numRuns: 300 },
    );
  });
});
