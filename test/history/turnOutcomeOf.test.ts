import type { TurnOutcome } from '../../lib/agent/TurnOutcome';
import { stateOutcome, turnOutcomeOf, type RecordedOutcome } from '../../lib/history/turnOutcomeOf';

// The outcomes a history records are the adapter's: neither list may gain a name the other lacks.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const outcomesAgree: Same<RecordedOutcome, TurnOutcome> = true;

describe('turnOutcomeOf()', () => {
  it('turnOutcomeOf() reads the outcome a terminal record carries', () => {
    expect(outcomesAgree).toBe(true);
    expect(turnOutcomeOf('Error', { outcome: 'budget_exceeded', limit: 'maxCostUsd' })).toEqual({
      outcome: 'budget_exceeded',
      recorded: true,
    });
    expect(turnOutcomeOf('EndOfTurn', { outcome: 'end_of_turn', usage: {} })).toEqual({
      outcome: 'end_of_turn',
      recorded: true,
    });
    expect(turnOutcomeOf('Paused', { outcome: 'cancelled' })).toEqual({ outcome: 'cancelled', recorded: true });
  });

  it('turnOutcomeOf() derives it from the state when the record says none, or names no outcome', () => {
    expect(turnOutcomeOf('EndOfTurn', undefined)).toEqual({ outcome: 'end_of_turn', recorded: false });
    expect(turnOutcomeOf('Cancelled', { reason: 'Esc' })).toEqual({ outcome: 'cancelled', recorded: false });
    expect(turnOutcomeOf('BudgetExceeded', ['outcome'])).toEqual({ outcome: 'budget_exceeded', recorded: false });
    expect(turnOutcomeOf('Error', { outcome: 'Budget exceeded!' })).toEqual({ outcome: 'error', recorded: false });
    expect(turnOutcomeOf('Error', { outcome: 42 })).toEqual({ outcome: 'error', recorded: false });
  });
});

describe('stateOutcome()', () => {
  it('stateOutcome() names the default terminal states as outcomes, and a custom one by itself', () => {
    expect(['EndOfTurn', 'Cancelled', 'BudgetExceeded', 'Error'].map(stateOutcome)).toEqual([
      'end_of_turn',
      'cancelled',
      'budget_exceeded',
      'error',
    ]);
    expect(stateOutcome('Crashed')).toBe('Crashed');
    // Names Object.prototype has are states like any other.
    expect(stateOutcome('constructor')).toBe('constructor');
  });
});
