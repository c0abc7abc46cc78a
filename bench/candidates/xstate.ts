// XState v5: one event type per target state, one subscriber. Variant `ring`: the subscriber
// also keeps what the library keeps — a record of the move (seq, from, to, description, time,
// time in the state left) in a 100-slot ring — so both sides do the same work.
import { createActor, createMachine } from 'xstate';
import { STATE_NAMES } from '../../states/StateName';
import { TRANSITIONS } from '../../lib/machine/transitions';
import { CYCLE, MOVES_PER_CYCLE, START } from '../cycle';
import { makeClock, type ClockKind, type Runner } from './Runner';

interface RingRecord {
  seq: number;
  from: string;
  to: string;
  description: string;
  at: number;
  durationMs: number;
  forced: boolean;
}

export function create(clock: ClockKind, variant = 'plain'): Runner {
  if (variant !== 'plain' && variant !== 'ring')
    throw new Error(`xstate variant must be plain or ring, got ${variant}`);
  let calls = 0;
  const states = Object.fromEntries(
    STATE_NAMES.map((s) => [
      s,
      { on: Object.fromEntries(TRANSITIONS[s].map((to) => [to, { target: to, description: '' }])) },
    ]),
  );
  const machine = createMachine({ id: 'agent', initial: START.from, states });
  const actor = createActor(machine);
  if (variant === 'plain') {
    actor.subscribe(() => {
      calls++;
    });
  } else {
    const now = makeClock(clock);
    const ring: RingRecord[] = [];
    let head = 0;
    let seq = 0;
    let from = String(START.from);
    let enteredAt = now();
    // The description travels with the event, as the library's does with the move.
    let description = '';
    actor.subscribe((snapshot) => {
      calls++;
      const at = now();
      const to = snapshot.value as string;
      const record: RingRecord = {
        seq: ++seq,
        from,
        to,
        description,
        at,
        durationMs: Math.max(0, at - enteredAt) || 0,
        forced: false,
      };
      from = to;
      enteredAt = at;
      if (ring.length < 100) ring.push(record);
      else {
        ring[head] = record;
        head = head === 99 ? 0 : head + 1;
      }
    });
    actor.start();
    actor.send({ type: START.to });
    const events = CYCLE.map((c) => ({ type: c.to }));
    const descriptions = CYCLE.map((c) => c.description);
    return {
      cycle() {
        for (let i = 0; i < MOVES_PER_CYCLE; i++) {
          description = descriptions[i]!;
          actor.send(events[i]!);
        }
      },
      // The subscriber also fires once on start, with the initial snapshot.
      listenerCalls: () => calls,
      state: () => String(actor.getSnapshot().value),
    };
  }
  actor.start();
  actor.send({ type: START.to });
  // Event objects made once, as the library's descriptions are constant strings.
  const events = CYCLE.map((c) => ({ type: c.to }));
  return {
    cycle() {
      for (let i = 0; i < MOVES_PER_CYCLE; i++) actor.send(events[i]!);
    },
    listenerCalls: () => calls,
    state: () => String(actor.getSnapshot().value),
  };
}
