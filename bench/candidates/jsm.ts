// javascript-state-machine v3: one named transition per edge, onAfterTransition.
import { CYCLE, EDGES, MOVES_PER_CYCLE, START, type Move } from '../cycle';
import type { StateName } from '../../states/StateName';
import type { ClockKind, Runner } from './Runner';

// @types/javascript-state-machine describes v2; this is the part of v3's API used here.
interface Jsm3 {
  readonly state: string;
  [transition: string]: unknown;
}
type Jsm3Constructor = new (options: {
  init: string;
  transitions: { name: string; from: string; to: string }[];
  methods: Record<string, (...args: unknown[]) => unknown>;
}) => Jsm3;

/** `sendingToLLMToProcessingLLMResponse`: one word with a lowercase first letter, which v3 leaves as is. */
function edgeName(from: StateName, to: StateName): string {
  return `${from[0]!.toLowerCase()}${from.slice(1)}To${to}`;
}

// eslint-disable-next-line @typescript-eslint/no-require-imports -- require() typed by hand: @types/javascript-state-machine describes v2, not v3
const Jsm = require('javascript-state-machine') as Jsm3Constructor;

export function create(_clock: ClockKind): Runner {
  let calls = 0;
  const fsm = new Jsm({
    init: START.from,
    transitions: EDGES.map(([from, to]) => ({ name: edgeName(from, to), from, to })),
    methods: {
      onAfterTransition() {
        calls++;
      },
    },
  });
  const method = (move: Move): (() => unknown) => {
    const fn = fsm[edgeName(move.from, move.to)];
    if (typeof fn !== 'function')
      throw new Error(`javascript-state-machine has no method ${edgeName(move.from, move.to)}`);
    return fn as () => unknown;
  };
  method(START).call(fsm);
  // The transition methods, looked up once, as code calling `fsm.runningToolToCheckingGitCommits()` would.
  const steps = CYCLE.map(method);
  return {
    cycle() {
      for (let i = 0; i < MOVES_PER_CYCLE; i++) steps[i]!.call(fsm);
    },
    listenerCalls: () => calls,
    state: () => fsm.state,
  };
}
