import type { TurnOutcome } from '../../lib/agent/TurnOutcome';
import { stateOutcome, turnOutcomeOf } from '../../lib/history/turnOutcomeOf';
import { TURN_OUTCOMES } from '../../lib/internal/turnOutcomes';

// The one list of outcomes names each of the adapter's, once: a new outcome fails here until it is listed.
const listed: Record<TurnOutcome, true> = {
  end_of_turn: true,
  wrapped_up: true,
  budget_exceeded: true,
  stalled: true,
  error: true,
  cancelled: true,
};

describe('turnOutcomeOf()', () => {
  it('turnOutcomeOf() reads the outcome a terminal record carries', () => {
    expect([...TURN_OUTCOMES].sort()).toEqual(Object.keys(listed).sort());
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
