import { AgentState, STATE_NAMES, STATES } from '../../lib/index';

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
