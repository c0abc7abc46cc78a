import { IllegalTransitionError, InvalidTableError, UnknownStateError } from '../../lib/index';
import { TransitionValidator } from '../../lib/machine/TransitionValidator';
import { STATE_NAMES } from '../../states/StateName';
import { TRANSITIONS } from '../../lib/machine/transitions';

describe('TransitionValidator', () => {
  const validator = new TransitionValidator();

  it('.canTransition() agrees with TRANSITIONS on every pair', () => {
    for (const from of STATE_NAMES)
      for (const to of STATE_NAMES) expect(validator.canTransition(from, to)).toBe(TRANSITIONS[from].includes(to));
  });

  it('.allowedFrom() lists the next states, and names an unknown state', () => {
    expect(validator.allowedFrom('CheckingBudget')).toEqual(['GatheringAdditionalMessages', 'BudgetExceeded']);
    expect(() => validator.allowedFrom('Nope' as never)).toThrow(
      new UnknownStateError('Nope', STATE_NAMES, 'allowedFrom() state'),
    );
  });

  it('.validate() passes legal moves and throws IllegalTransitionError with from, to and allowed', () => {
    expect(() => validator.validate('Ready', 'WaitingForUserInput')).not.toThrow();
    let caught: unknown;
    try {
      validator.validate('RunningTool', 'Cancelled', 'user pressed stop', 1000);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(IllegalTransitionError);
    expect(caught).toMatchObject({
      code: 'illegal_transition',
      name: 'IllegalTransitionError',
      from: 'RunningTool',
      to: 'Cancelled',
      allowed: ['CheckingGitCommits', 'Error'],
      description: 'user pressed stop',
      at: 1000,
      message:
        'Illegal transition RunningTool → Cancelled ("user pressed stop"): RunningTool may only move to CheckingGitCommits, Error',
    });
  });

  it('.validate() throws UnknownStateError naming a bad source or target', () => {
    expect(() => validator.validate('Ready', 'Redy' as never)).toThrow(
      /Unknown state `Redy` \(string\) as transition target; known states: Ready, WaitingForUserInput/,
    );
    expect(() => validator.validate(7 as never, 'Ready')).toThrow(/Unknown state `7` \(number\) as transition source/);
  });

  it('.isTerminal() and .isError() read the state flags', () => {
    expect(STATE_NAMES.filter((s) => validator.isTerminal(s))).toEqual([
      'EndOfTurn',
      'Cancelled',
      'BudgetExceeded',
      'Error',
    ]);
    expect(STATE_NAMES.filter((s) => validator.isError(s))).toEqual(['Cancelled', 'BudgetExceeded', 'Error']);
  });

  it('refuses an unsound table', () => {
    expect(
      () => new TransitionValidator({ initial: 'A', states: { A: { name: 'A', description: 'a', next: [] } } }),
    ).toThrow(InvalidTableError);
  });
});
