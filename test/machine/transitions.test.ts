import { DEFAULT_TABLE, type StateName } from '../../lib/index';
import { STATE_NAMES } from '../../states/StateName';
import { STATES } from '../../states/registry';
import { TRANSITIONS } from '../../lib/machine/transitions';
import { canTransition } from '../../lib/machine/canTransition';
import { tableEdges } from '../../lib/machine/TransitionTable';

// The table from DESIGN.md, typed in by hand on purpose: the code must match the document.
const DESIGN_TABLE: Record<StateName, StateName[]> = {
  Ready: ['WaitingForUserInput'],
  WaitingForUserInput: ['SendingToLLM', 'Error'],
  SendingToLLM: ['ProcessingLLMResponse', 'Error'],
  ProcessingLLMResponse: ['EndOfTurn', 'ToolUseRequested', 'Error'],
  EndOfTurn: ['WaitingForUserInput'],
  ToolUseRequested: ['CheckingForCancellation'],
  CheckingForCancellation: ['RunningTool', 'Cancelled'],
  RunningTool: ['CheckingGitCommits', 'Error'],
  CheckingGitCommits: ['RunningAutoformatters', 'CheckingBudget'],
  RunningAutoformatters: ['CheckingBudget'],
  CheckingBudget: ['GatheringAdditionalMessages', 'BudgetExceeded'],
  GatheringAdditionalMessages: ['SendingToolResults', 'Error'],
  SendingToolResults: ['ProcessingLLMResponse', 'Error'],
  Cancelled: ['WaitingForUserInput'],
  BudgetExceeded: ['WaitingForUserInput'],
  Error: ['WaitingForUserInput'],
};

describe('TRANSITIONS', () => {
  it('equals the design table on all 256 pairs', () => {
    let allowed = 0;
    for (const from of STATE_NAMES) {
      for (const to of STATE_NAMES) {
        const expected = DESIGN_TABLE[from].includes(to);
        expect({ from, to, allowed: TRANSITIONS[from].includes(to) }).toEqual({ from, to, allowed: expected });
        expect(canTransition(DEFAULT_TABLE, from, to)).toBe(expected);
        if (expected) allowed += 1;
      }
    }
    expect(allowed).toBe(26);
  });

  it('is derived from the state classes', () => {
    for (const name of STATE_NAMES) expect(TRANSITIONS[name]).toBe(STATES[name].next);
  });

  it('has no edge into Ready, so Ready is left once', () => {
    expect(tableEdges(DEFAULT_TABLE).filter(([, to]) => to === 'Ready')).toEqual([]);
  });
});

describe('DEFAULT_TABLE', () => {
  it('starts in Ready and has 26 edges', () => {
    expect(DEFAULT_TABLE.initial).toBe('Ready');
    expect(tableEdges(DEFAULT_TABLE)).toHaveLength(26);
  });

  it('rejects the moves the original loop asked for silently', () => {
    expect(canTransition(DEFAULT_TABLE, 'ProcessingLLMResponse', 'BudgetExceeded')).toBe(false);
    expect(canTransition(DEFAULT_TABLE, 'RunningTool', 'Cancelled')).toBe(false);
  });
});

describe('canTransition()', () => {
  it('answers false for names the table lacks', () => {
    expect(canTransition(DEFAULT_TABLE, 'Nope', 'Ready')).toBe(false);
    expect(canTransition(DEFAULT_TABLE, 'Ready', 'Nope')).toBe(false);
    expect(canTransition(DEFAULT_TABLE, 'toString', 'Ready')).toBe(false);
  });
});
