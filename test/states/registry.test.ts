import { AgentState } from '../../states/AgentState';
import { STATE_NAMES } from '../../states/StateName';
import { STATES } from '../../states/registry';

describe('STATES', () => {
  it('holds one instance per state name, under its own name', () => {
    expect(Object.keys(STATES)).toEqual([...STATE_NAMES]);
    for (const name of STATE_NAMES) {
      expect(STATES[name]).toBeInstanceOf(AgentState);
      expect(STATES[name].name).toBe(name);
    }
  });

  it('is frozen', () => {
    expect(Object.isFrozen(STATES)).toBe(true);
  });
});
