// agent-state-machine's StateMachine as users get it: default history (100), default logger
// at its default level ('warn'), one listener; the clock injected for the counter table.
import { StateMachine } from '../../lib/index';
import { CYCLE, MOVES_PER_CYCLE, START } from '../cycle';
import { makeClock, type ClockKind, type Runner } from './Runner';

export function create(clock: ClockKind): Runner {
  let calls = 0;
  const m = clock === 'date' ? new StateMachine() : new StateMachine({ clock: makeClock(clock) });
  if (m.maxHistorySize !== 100) throw new Error(`default history is ${m.maxHistorySize}, expected 100`);
  m.onTransition(() => {
    calls++;
  });
  m.transition(START.to, START.description);
  const to = CYCLE.map((c) => c.to);
  const descriptions = CYCLE.map((c) => c.description);
  return {
    cycle() {
      for (let i = 0; i < MOVES_PER_CYCLE; i++) m.transition(to[i]!, descriptions[i]!);
    },
    listenerCalls: () => calls,
    state: () => m.current,
  };
}
