// Part 1 of issue 6: the cost of one move, in ns, on the tool-use turn (13 moves, repeated),
// for this library's StateMachine, a bare floor, XState v5 and javascript-state-machine v3.
//
// Each candidate is measured in a fresh process (so one candidate's JIT feedback, e.g. on
// eventemitter3's emit, cannot slow another down), in several rounds with the order rotated.
// In a process, mitata times one whole cycle per iteration over many samples; we keep the
// median sample. Across rounds we keep the median of those medians.
//
//   npm run bench                                  everything (this suite is run by bench/index.ts)
//   npx tsx bench/transition.bench.ts              this suite alone
//   npx tsx bench/transition.bench.ts --candidate library   one candidate, one process
//   BENCH_ROUNDS=5 npx tsx bench/transition.bench.ts        more rounds
//   BENCH_LIB=dist/index.cjs npx tsx bench/transition.bench.ts   time a built bundle instead of lib/ via tsx
// (`npm run bench` builds the bundle first and sets BENCH_LIB: see bench/library.ts.)
import EventEmitter from 'eventemitter3';
import { measure } from 'mitata';
import { createActor, createMachine } from 'xstate';
import { STATE_NAMES, type StateName } from '../states/StateName';
import { TRANSITIONS } from '../lib/machine/transitions';
import { assertCycle, CYCLE, EDGES, MOVES_PER_CYCLE, START } from './cycle';
import { failed, formatNs, formatRatio, median, printSuite, runInChild, serveChild, type SuiteResult } from './harness';
import { describeLibrary, loadLibrary } from './library';

export const CANDIDATES = ['floor', 'library', 'xstate', 'javascript-state-machine'] as const;
export type CandidateName = (typeof CANDIDATES)[number];

const LABELS: Record<CandidateName, string> = {
  floor: 'floor (Map/Set + Date.now + ring + ee3 emit)',
  library: 'agent-state-machine (defaults, 1 listener)',
  xstate: 'XState v5 (actor, 1 subscriber)',
  'javascript-state-machine': 'javascript-state-machine v3 (onAfterTransition)',
};

/** A candidate ready to run: `cycle()` does the 13 moves once; `listenerCalls()` and `state()` let us check it did. */
interface Runner {
  cycle(): void;
  listenerCalls(): number;
  state(): string;
}

// The one listener every candidate gets: trivial, but its effect is observed afterwards.
let calls = 0;

const TARGETS_TO = CYCLE.map((m) => m.to);
const DESCRIPTIONS = CYCLE.map((m) => m.description);

// ── the floor: the least a validating, recording, notifying machine can do ────────────────

interface FloorRecord {
  seq: number;
  from: string;
  to: string;
  description: string;
  at: number;
  durationMs: number;
  forced: boolean;
}

class FloorMachine {
  current: string;
  enteredAt = Date.now();
  seq = 0;
  readonly edges: Map<string, Set<string>>;
  readonly ring: FloorRecord[] = [];
  head = 0;
  readonly emitter = new EventEmitter<{ transition: [FloorRecord] }>();

  constructor(initial: string, edges: readonly (readonly [string, string])[]) {
    this.current = initial;
    this.edges = new Map();
    for (const [from, to] of edges) {
      let set = this.edges.get(from);
      if (set === undefined) this.edges.set(from, (set = new Set()));
      set.add(to);
    }
  }

  transition(to: string, description: string): FloorRecord {
    const from = this.current;
    const allowed = this.edges.get(from);
    if (allowed === undefined || !allowed.has(to)) throw new Error(`illegal move ${from} → ${to}`);
    const at = Date.now();
    // As the library computes it: Math.max returns a Smi, so V8 stores the field unboxed.
    const durationMs = Math.max(0, at - this.enteredAt) || 0;
    const record: FloorRecord = { seq: ++this.seq, from, to, description, at, durationMs, forced: false };
    this.current = to;
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

function floor(): Runner {
  const m = new FloorMachine(START.from, EDGES);
  m.emitter.on('transition', () => {
    calls++;
  });
  m.transition(START.to, START.description);
  return {
    cycle() {
      for (let i = 0; i < MOVES_PER_CYCLE; i++) m.transition(TARGETS_TO[i]!, DESCRIPTIONS[i]!);
    },
    listenerCalls: () => calls,
    state: () => m.current,
  };
}

// ── this library, default options, one listener ──────────────────────────────────────────

function library(): Runner {
  const { StateMachine } = loadLibrary();
  const m = new StateMachine();
  if (m.maxHistorySize !== 100) throw new Error(`default history is ${m.maxHistorySize}, expected 100`);
  m.onTransition(() => {
    calls++;
  });
  m.transition(START.to, START.description);
  return {
    cycle() {
      for (let i = 0; i < MOVES_PER_CYCLE; i++) m.transition(TARGETS_TO[i]!, DESCRIPTIONS[i]!);
    },
    listenerCalls: () => calls,
    state: () => m.current,
  };
}

// ── XState v5: one event type per target state, one subscriber ───────────────────────────

function xstate(): Runner {
  const states = Object.fromEntries(
    STATE_NAMES.map((s) => [s, { on: Object.fromEntries(TRANSITIONS[s].map((to) => [to, { target: to }])) }]),
  );
  const machine = createMachine({ id: 'agent', initial: START.from, states });
  const actor = createActor(machine);
  actor.subscribe(() => {
    calls++;
  });
  actor.start();
  const startEvent = { type: START.to };
  actor.send(startEvent);
  // Event objects made once, as the library's descriptions are constant strings.
  const events = TARGETS_TO.map((to) => ({ type: to }));
  return {
    cycle() {
      for (let i = 0; i < MOVES_PER_CYCLE; i++) actor.send(events[i]!);
    },
    listenerCalls: () => calls,
    state: () => String(actor.getSnapshot().value),
  };
}

// ── javascript-state-machine v3: one named transition per edge, onAfterTransition ─────────

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

function javascriptStateMachine(): Runner {
  const Jsm = require('javascript-state-machine') as Jsm3Constructor;
  const fsm = new Jsm({
    init: START.from,
    transitions: EDGES.map(([from, to]) => ({ name: edgeName(from, to), from, to })),
    methods: {
      onAfterTransition() {
        calls++;
      },
    },
  });
  const method = (move: { from: StateName; to: StateName }): (() => unknown) => {
    const fn = fsm[edgeName(move.from, move.to)];
    if (typeof fn !== 'function') throw new Error(`javascript-state-machine has no method ${edgeName(move.from, move.to)}`);
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

const FACTORIES: Record<CandidateName, () => Runner | Promise<Runner>> = {
  floor,
  library,
  xstate,
  'javascript-state-machine': javascriptStateMachine,
};

/** One candidate's figures from one process. */
export interface CandidateSample {
  readonly candidate: CandidateName;
  /** Median over mitata's samples, ns per move. */
  readonly p50: number;
  readonly p25: number;
  readonly p75: number;
  readonly samples: number;
}

/** Measures one candidate in this process. */
export async function measureCandidate(candidate: CandidateName): Promise<CandidateSample> {
  assertCycle();
  if (process.env.AGENT_SM_LOG_LEVEL !== undefined) throw new Error('unset AGENT_SM_LOG_LEVEL: the library must run at its default log level');
  const runner = await FACTORIES[candidate]();
  const before = runner.listenerCalls();
  // Warm up past the JIT tiers, so the first samples are not interpreter time.
  for (let i = 0; i < 20_000; i++) runner.cycle();
  const stats = await measure(() => runner.cycle(), { min_cpu_time: 1e9 });
  const moved = runner.listenerCalls() - before;
  if (moved <= 0 || moved % MOVES_PER_CYCLE !== 0) throw new Error(`${candidate}: listener saw ${moved} moves, not whole cycles`);
  if (runner.state() !== START.to) throw new Error(`${candidate}: ended in ${runner.state()}, expected ${START.to}`);
  return {
    candidate,
    p50: stats.p50 / MOVES_PER_CYCLE,
    p25: stats.p25 / MOVES_PER_CYCLE,
    p75: stats.p75 / MOVES_PER_CYCLE,
    samples: stats.samples.length,
  };
}

/** Runs every candidate in its own process, `rounds` times, and reports medians and ratios. */
export async function run(rounds = Number(process.env.BENCH_ROUNDS ?? 3)): Promise<SuiteResult> {
  if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`BENCH_ROUNDS must be a positive integer, got ${String(process.env.BENCH_ROUNDS)}`);
  console.log(`  library under test: ${describeLibrary()}`);
  const byCandidate = new Map<CandidateName, CandidateSample[]>(CANDIDATES.map((c) => [c, []]));
  for (let r = 0; r < rounds; r++) {
    // Rotate the order so no candidate always runs first (or last).
    const order = CANDIDATES.map((_, i) => CANDIDATES[(i + r) % CANDIDATES.length]!);
    for (const candidate of order) {
      const sample = await runInChild<CandidateSample>(__filename, ['--candidate', candidate]);
      byCandidate.get(candidate)!.push(sample);
      console.log(`  round ${r + 1}/${rounds}  ${candidate.padEnd(24)} ${formatNs(sample.p50)}/move  (p25 ${formatNs(sample.p25)}, p75 ${formatNs(sample.p75)}, ${sample.samples} samples)`);
    }
  }
  const ns = (c: CandidateName): number => median(byCandidate.get(c)!.map((s) => s.p50));
  const spread = (c: CandidateName): string => {
    const values = byCandidate.get(c)!.map((s) => s.p50);
    return `${formatNs(Math.min(...values))} – ${formatNs(Math.max(...values))}`;
  };
  const floorNs = ns('floor');
  const libNs = ns('library');
  const xstateNs = ns('xstate');
  const jsmNs = ns('javascript-state-machine');
  const libVsFloor = libNs / floorNs;
  const xstateVsLib = xstateNs / libNs;
  const jsmVsLib = jsmNs / libNs;
  return {
    suite: 'transition',
    columns: ['ns/move', '× floor', `range over ${rounds} rounds`],
    rows: CANDIDATES.map((c) => ({ label: LABELS[c], cells: [formatNs(ns(c)), formatRatio(ns(c) / floorNs), spread(c)] })),
    targets: [
      { name: 'library move vs floor', goal: '≤ 1.30×', measured: formatRatio(libVsFloor), pass: libVsFloor <= 1.3 },
      { name: 'XState v5 vs library', goal: '≥ 25× slower', measured: formatRatio(xstateVsLib), pass: xstateVsLib >= 25 },
      { name: 'javascript-state-machine v3 vs library', goal: '≥ 15× slower', measured: formatRatio(jsmVsLib), pass: jsmVsLib >= 15 },
    ],
  };
}

function parseCandidate(argv: readonly string[]): CandidateName | undefined {
  const i = argv.indexOf('--candidate');
  if (i === -1) return undefined;
  const name = argv[i + 1];
  if (!(CANDIDATES as readonly string[]).includes(name ?? '')) {
    throw new Error(`--candidate must be one of ${CANDIDATES.join(', ')}, got ${String(name)}`);
  }
  return name as CandidateName;
}

if (require.main === module) {
  const candidate = parseCandidate(process.argv.slice(2));
  if (candidate !== undefined) {
    if (!serveChild(() => measureCandidate(candidate))) {
      measureCandidate(candidate).then((s) => console.log(s), failed);
    }
  } else {
    run().then(printSuite, failed);
  }
}
