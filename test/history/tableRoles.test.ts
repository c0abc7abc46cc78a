import { tableRoles } from '../../lib/history/tableRoles';
import { createTable } from '../../lib/machine/createTable';
import { DEFAULT_TABLE } from '../../lib/machine/transitions';

describe('tableRoles()', () => {
  it('tableRoles() reads terminal and error states from the flags, and idle ones from the initial state and where terminal states lead', () => {
    const roles = tableRoles(DEFAULT_TABLE);
    expect([...roles.terminal].sort()).toEqual(['BudgetExceeded', 'Cancelled', 'EndOfTurn', 'Error']);
    expect([...roles.error].sort()).toEqual(['BudgetExceeded', 'Cancelled', 'Error']);
    expect([...roles.idle].sort()).toEqual(['Ready', 'WaitingForUserInput']);
  });

  it('tableRoles() works for a table of states of its own', () => {
    const table = createTable(
      [
        { name: 'Off', description: '', next: ['Idle'] },
        { name: 'Idle', description: '', next: ['Busy'] },
        { name: 'Busy', description: '', next: ['Done', 'Broken'] },
        { name: 'Done', description: '', next: ['Idle'], isTerminal: true },
        { name: 'Broken', description: '', next: ['Off'], isTerminal: true, isError: true },
      ],
      'Off',
    );
    expect(tableRoles(table)).toMatchObject({
      terminal: new Set(['Done', 'Broken']),
      error: new Set(['Broken']),
      idle: new Set(['Off', 'Idle']),
      activity: new Map(),
      llmRequest: new Set(),
    });
  });
});
