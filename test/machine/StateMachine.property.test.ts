import fc from 'fast-check';
import { IllegalTransitionError, StateMachine, type StateName, type TransitionRecord } from '../../lib/index';
import { STATE_NAMES } from '../../states/StateName';
import { TRANSITIONS } from '../../lib/machine/transitions';

type Command =
  | { kind: 'move'; to: StateName }
  | { kind: 'force'; to: StateName }
  | { kind: 'tick'; ms: number }
  | { kind: 'reset' }
  | { kind: 'resize'; size: number };

const stateArb = fc.constantFrom(...STATE_NAMES);
const commandArb: fc.Arbitrary<Command> = fc.oneof(
  { weight: 10, arbitrary: stateArb.map((to) => ({ kind: 'move' as const, to })) },
  { weight: 2, arbitrary: stateArb.map((to) => ({ kind: 'force' as const, to })) },
  // The clock may jump back: durations must still never be negative.
  { weight: 4, arbitrary: fc.integer({ min: -1000, max: 5000 }).map((ms) => ({ kind: 'tick' as const, ms })) },
  { weight: 1, arbitrary: fc.constant({ kind: 'reset' as const }) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 30 }).map((size) => ({ kind: 'resize' as const, size })) },
);

interface Run {
  history: TransitionRecord[];
  sunk: TransitionRecord[];
  notified: TransitionRecord[];
  finalState: StateName;
}

/** Runs commands against a fresh machine and checks, step by step, that state changes only as the table allows. */
function run(commands: Command[], initialBound: number): Run {
  let maxHistorySize = initialBound;
  let now = 1_000_000;
  const sunk: TransitionRecord[] = [];
  const notified: TransitionRecord[] = [];
  const machine = new StateMachine({ clock: () => now, logger: false, maxHistorySize, sink: (r) => sunk.push(r) });
  machine.onTransition((r) => notified.push(r));
  // The model of the history: the newest records since the last reset, trimmed to the bound
  // in force when each was added or the bound shrank (growing it brings nothing back).
  let kept: TransitionRecord[] = [];
  // The model of the committed state: the state before the last move, and when it was entered.
  let previous: StateName | 'Unknown' = 'Unknown';
  let enteredAt = now;
  for (const command of commands) {
    const before = machine.current;
    switch (command.kind) {
      case 'tick':
        now += command.ms;
        break;
      case 'resize':
        maxHistorySize = command.size;
        machine.setMaxHistorySize(command.size);
        kept = kept.slice(-maxHistorySize);
        break;
      case 'reset':
        machine.reset();
        kept = [];
        [previous, enteredAt] = ['Unknown', now];
        expect(machine.current).toBe('Ready');
        break;
      case 'force':
        kept.push(machine.forceTransition(command.to, 'forced by test'));
        [previous, enteredAt] = [before, now];
        expect(machine.current).toBe(command.to);
        break;
      case 'move':
        if (TRANSITIONS[before].includes(command.to)) {
          kept.push(machine.transition(command.to, 'asked'));
          [previous, enteredAt] = [before, now];
          expect(machine.current).toBe(command.to);
        } else {
          expect(() => machine.transition(command.to, 'asked')).toThrow(IllegalTransitionError);
          expect(machine.current).toBe(before);
        }
        break;
    }
    // The bound, and history = the model's.
    const history = machine.history();
    expect(history.length).toBeLessThanOrEqual(maxHistorySize);
    kept = kept.slice(-maxHistorySize);
    expect(history).toEqual(kept);
    // Whatever the bound, resets and rejected moves: previous and the time in state follow the model.
    expect(machine.previous).toBe(previous);
    expect(machine.pendingState).toBe(machine.current);
    expect(machine.timeInState()).toBe(Math.max(0, now - enteredAt));
  }
  return { history: machine.history(), sunk, notified, finalState: machine.current };
}

describe('StateMachine invariants (property-based)', () => {
  it('state changes only through legal or forced moves; history chains, stays bounded, and the sink sees everything', () => {
    fc.assert(
      fc.property(fc.array(commandArb, { maxLength: 120 }), fc.integer({ min: 1, max: 30 }), (commands, bound) => {
        const { sunk, notified } = run(commands, bound);
        // The sink and the listeners saw every committed record, in order.
        expect(notified).toEqual(sunk);
        // seq increases by one across the whole run, resets included.
        sunk.forEach((r, i) => expect(r.seq).toBe(i + 1));
        for (let i = 0; i < sunk.length; i++) {
          const r = sunk[i]!;
          expect(r.durationMs).toBeGreaterThanOrEqual(0);
          if (!r.forced) expect(TRANSITIONS[r.from]).toContain(r.to);
        }
        // Each record starts where the previous ended, except right after a reset (from Ready).
        let resetsSeen = 0;
        const resetCount = commands.filter((c) => c.kind === 'reset').length;
        for (let i = 1; i < sunk.length; i++) {
          if (sunk[i]!.from !== sunk[i - 1]!.to) {
            expect(sunk[i]!.from).toBe('Ready');
            resetsSeen += 1;
          }
        }
        expect(resetsSeen).toBeLessThanOrEqual(resetCount);
      }),
      { numRuns: 1000 },
    );
  });

  it('the same inputs with the same clock give the same history', () => {
    fc.assert(
      fc.property(fc.array(commandArb, { maxLength: 80 }), fc.integer({ min: 1, max: 200 }), (commands, bound) => {
        const a = run(commands, bound);
        const b = run(commands, bound);
        expect(b.history).toEqual(a.history);
        expect(b.sunk).toEqual(a.sunk);
        expect(b.finalState).toBe(a.finalState);
      }),
      { numRuns: 300 },
    );
  });

  it('moves asked for from inside listeners keep history and notifications in the order they took effect', () => {
    fc.assert(
      // A bound of 1 keeps only the record being told: the committed state must not need more.
      fc.property(
        fc.array(fc.array(stateArb, { maxLength: 3 }), { minLength: 1, maxLength: 30 }),
        fc.constantFrom(1, 2, Infinity),
        (plans, bound) => {
          const notified: number[] = [];
          const sunk: number[] = [];
          // A real sink: it is called before listeners, and moves must reach it in the order they took effect.
          const sunkRecords: TransitionRecord[] = [];
          const machine = new StateMachine({
            clock: () => 0,
            logger: false,
            maxHistorySize: bound,
            sink: (r) => (sunk.push(r.seq), sunkRecords.push(r)),
          });
          const listenerMachine = machine;
          let step = 0;
          listenerMachine.onTransition((r) => {
            notified.push(r.seq);
            // While moves wait their turn, the machine is in the state of the record being told.
            expect([listenerMachine.previous, listenerMachine.current]).toEqual([r.from, r.to]);
            // Each notification asks for a few random moves; illegal ones are rejected at once.
            const plan = plans[step++ % plans.length]!;
            for (const to of plan) {
              if (step > 200) return;
              try {
                listenerMachine.transition(to);
              } catch (error) {
                expect(error).toBeInstanceOf(IllegalTransitionError);
              }
            }
          });
          machine.transition('WaitingForUserInput');
          const history = sunkRecords;
          expect(machine.history()).toEqual(history.slice(-bound));
          history.forEach((r, i) => {
            expect(r.seq).toBe(i + 1);
            if (i > 0) expect(r.from).toBe(history[i - 1]!.to);
            expect(TRANSITIONS[r.from]).toContain(r.to);
          });
          expect(notified).toEqual(history.map((r) => r.seq));
          expect(sunk).toEqual(notified);
          expect(machine.current).toBe(history.at(-1)!.to);
        },
      ),
      { numRuns: 500 },
    );
  });
});
