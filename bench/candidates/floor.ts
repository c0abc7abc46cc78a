// The floor: the least a validating, recording, notifying machine can do, doing what the
// library does — one lookup per move (the node it is in maps each allowed target to that
// target's node), the clock, a record of the same seven fields, a 100-slot ring and one
// eventemitter3 emit to one listener. No validation of arguments, no error containment. Its
// time field is kept unboxed, as the library's is: the floor is the least, written well.
import EventEmitter from 'eventemitter3';
import { CYCLE, EDGES, MOVES_PER_CYCLE, START } from '../cycle';
import { makeClock, type ClockKind, type Runner } from './Runner';

interface FloorRecord {
  seq: number;
  from: string;
  to: string;
  description: string;
  at: number;
  durationMs: number;
  forced: boolean;
}

interface FloorNode {
  readonly name: string;
  readonly next: Map<string, FloorNode>;
}

class FloorMachine {
  node: FloorNode;
  // A number from the start, so V8 keeps the time unboxed and updates it in place (a field
  // first set to undefined would take a new heap number, behind a write barrier, per move).
  enteredAt = 0;
  seq = 0;
  readonly ring: FloorRecord[] = [];
  head = 0;
  readonly emitter = new EventEmitter<{ transition: [FloorRecord] }>();

  constructor(
    initial: string,
    edges: readonly (readonly [string, string])[],
    readonly clock: () => number,
  ) {
    const nodes = new Map<string, FloorNode>();
    const nodeOf = (name: string): FloorNode => {
      let n = nodes.get(name);
      if (n === undefined) nodes.set(name, (n = { name, next: new Map() }));
      return n;
    };
    for (const [from, to] of edges) nodeOf(from).next.set(to, nodeOf(to));
    this.node = nodeOf(initial);
    this.enteredAt = clock();
  }

  transition(to: string, description: string): FloorRecord {
    const from = this.node;
    const next = from.next.get(to);
    if (next === undefined) throw new Error(`illegal move ${from.name} → ${to}`);
    const at = this.clock();
    const durationMs = Math.max(0, at - this.enteredAt) || 0;
    const record: FloorRecord = {
      seq: ++this.seq,
      from: from.name,
      to: next.name,
      description,
      at,
      durationMs,
      forced: false,
    };
    this.node = next;
    this.enteredAt = at;
    if (this.ring.length < 100) this.ring.push(record);
    else {
      this.ring[this.head] = record;
      this.head = this.head === 99 ? 0 : this.head + 1;
    }
    this.emitter.emit('transition', record);
    return record;
  }
}

export function create(clock: ClockKind): Runner {
  let calls = 0;
  const m = new FloorMachine(START.from, EDGES, makeClock(clock));
  m.emitter.on('transition', () => {
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
    state: () => m.node.name,
  };
}
