// Part 3 of issue 6: the adapter. What `AgentWithStateMachine.runTurn` costs per move, over
// and above the agent's own work, with an agent that takes no time at all: its LLM replies
// and its tools are async functions resolving at once with canned values (no timers).
//
//  - bare:    the same agent object driven by a hand-written loop, as in
//             examples/wrap-existing-loop.ts: send the user message; while the response asks
//             for tools, run each and send the results; return the text.
//  - floor:   the bare loop plus the same moves made by hand on a bare StateMachine (default
//             options): what a user would write to get the same record without the adapter.
//             The target is wrapped ÷ floor, sample by sample.
//  - wrapped: `new AgentWithStateMachine(agent, { budget: { maxCostUsd: 1e9, strict: false } })`, i.e. what
//             users get: default logger at its default level ('warn'), default history (100),
//             and a budget, so that every budget check runs. One adapter, `runTurn` again and
//             again: each turn starts with the move from the last turn's EndOfTurn.
//
// Workloads: the original's tool-use turn (1 tool call, then a text reply: 12 moves) and a
// turn of 3 tool rounds (28 moves); moves per turn are read from `TurnResult.transitions`.
//
// In one process, bare and wrapped samples alternate (so load on the machine hits both
// alike); a sample is the mean of a batch of turns, and we keep each side's median sample.
// That is done in several fresh processes (rounds), and the figures are the medians of the
// rounds' figures. Overhead per move = (wrapped − bare) per turn / moves per turn.
//
//   npm run bench -- adapter                     this suite through the runner (bundle)
//   npx tsx bench/adapter.bench.ts               alone (lib/ through tsx unless BENCH_LIB is set)
//   npx tsx bench/adapter.bench.ts --measure     one process, one round, printed
//   BENCH_ROUNDS=5 npm run bench -- adapter      more rounds (default 3)
import type { AgentLoop, LLMResponse, OperationContext, ToolCall, ToolResult } from '../lib/index';
import {
  failed,
  formatNs,
  formatRatio,
  formatRatioFigure,
  median,
  printSuite,
  ratioFigure,
  ratioTarget,
  runInChild,
  scaled,
  serveChild,
  type SuiteResult,
} from './harness';
import { describeLibrary, loadLibrary } from './library';

/**
 * The target: a wrapped turn at most this many times the floor (the bare loop making the same
 * moves by hand on a bare machine). What the adapter adds on top — budgets charged and checked
 * before every call, an abort signal per operation, retries planned, events, the turn's result
 * — is paid per move; the ratio keeps it in proportion to the least such a loop can cost. 10×
 * is the former absolute target (1 µs per move of overhead) expressed against this floor where
 * it was set: a 12-move floor turn of about 1.1 µs plus 12 µs of allowed overhead.
 */
const TARGET_RATIO = 10;

const INPUT = 'What files are here?';
const TOOL_OUTPUT = 'README.md package.json lib/ test/';
const FINAL_TEXT = 'I see: README.md package.json lib/ test/';

interface Workload {
  readonly name: string;
  readonly label: string;
  /** Responses asking for one tool call before the text reply. */
  readonly toolRounds: number;
  /** Moves a turn must make, checked against `TurnResult.transitions`. */
  readonly expectedMoves: number;
}

const WORKLOADS: readonly Workload[] = [
  { name: 'tool-use turn', label: 'tool-use turn (1 tool call, then text)', toolRounds: 1, expectedMoves: 12 },
  { name: '3 tool rounds', label: '3 tool rounds (1 call each, then text)', toolRounds: 3, expectedMoves: 28 },
];

/** Turns per sample, and samples per side, in each process. */
const TURNS_PER_SAMPLE = 100;
const SAMPLES = scaled(151, 41);
const WARMUP_TURNS = scaled(20_000, 5000);

// ── the agent: zero latency, the same object for bare and wrapped ──────────────────────────

interface ZeroLatencyAgent extends AgentLoop {
  /** Calls received, for checking that both loops did the work (one integer each: no recording). */
  readonly counts: { user: number; results: number; tools: number };
}

function zeroLatencyAgent(toolRounds: number): ZeroLatencyAgent {
  // Canned replies, as an SDK would hand over: a tool call with usage, then text with usage.
  const toolReply: LLMResponse = {
    toolCalls: [{ id: 'call_1', name: 'list_files', input: { dir: '.' } }],
    usage: { inputTokens: 800, outputTokens: 30, costUsd: 0.003 },
  };
  const textReply: LLMResponse = { text: FINAL_TEXT, usage: { inputTokens: 900, outputTokens: 25, costUsd: 0.003 } };
  const counts = { user: 0, results: 0, tools: 0 };
  let round = 0; // tool rounds so far in this turn
  return {
    counts,
    async sendUserMessage(_message: string, _ctx: OperationContext): Promise<LLMResponse> {
      counts.user += 1;
      round = 0;
      return toolRounds > 0 ? toolReply : textReply;
    },
    async sendToolResults(_results: ToolResult[], _messages: string[], _ctx: OperationContext): Promise<LLMResponse> {
      counts.results += 1;
      round += 1;
      return round < toolRounds ? toolReply : textReply;
    },
    async runTool(call: ToolCall, _ctx: OperationContext): Promise<ToolResult> {
      counts.tools += 1;
      return { callId: call.id, output: TOOL_OUTPUT };
    },
  };
}

// ── bare: the loop people write by hand, over the same operations ─────────────────────────

async function bareTurn(agent: AgentLoop, input: string, ctx: OperationContext): Promise<string | undefined> {
  let response = await agent.sendUserMessage(input, ctx);
  while (response.toolCalls !== undefined && response.toolCalls.length > 0) {
    const results: ToolResult[] = [];
    for (const call of response.toolCalls) results.push(await agent.runTool(call, ctx));
    response = await agent.sendToolResults(results, [], ctx);
  }
  return response.text;
}

// ── sampling ───────────────────────────────────────────────────────────────────────────────

/** Mean ns per turn over `turns` turns, run one after another. */
async function sample(turn: () => Promise<unknown>, turns: number): Promise<number> {
  const start = process.hrtime.bigint();
  for (let i = 0; i < turns; i++) await turn();
  return Number(process.hrtime.bigint() - start) / turns;
}

/** A macrotask between samples, outside the timed part, as between a real agent's turns. */
function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** One workload's figures from one process. */
export interface WorkloadSample {
  readonly workload: string;
  readonly moves: number;
  /** Medians over the samples, ns per turn. */
  readonly bareNs: number;
  readonly wrappedNs: number;
  readonly floorNs: number;
  /** wrapped ÷ floor, one per sample (each pair timed side by side). */
  readonly ratios: readonly number[];
  /** Quartiles of wrapped − bare over paired samples, ns per turn: how steady the difference is. */
  readonly overheadP25: number;
  readonly overheadP75: number;
  readonly samples: number;
}

function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}

async function measureWorkload(workload: Workload): Promise<WorkloadSample> {
  const { AgentWithStateMachine } = loadLibrary();
  const agent = zeroLatencyAgent(workload.toolRounds);
  // Defaults everywhere but the budget: default logger ('warn'), default history (100).
  const adapter = new AgentWithStateMachine(agent, { budget: { maxCostUsd: 1e9, strict: false } });
  if (adapter.machine.maxHistorySize !== 100)
    throw new Error(`default history is ${adapter.machine.maxHistorySize}, expected 100`);
  const ctx: OperationContext = { signal: new AbortController().signal, turn: 1 };

  // Check both loops once, and read the moves per turn from the adapter's own count.
  const text = await bareTurn(agent, INPUT, ctx);
  if (text !== FINAL_TEXT) throw new Error(`bare loop returned ${String(text)}`);
  const check = await adapter.runTurn(INPUT);
  if (check.outcome !== 'end_of_turn' || check.text !== FINAL_TEXT) {
    throw new Error(`wrapped turn ended ${check.outcome}: ${check.error?.message ?? String(check.text)}`);
  }
  const moves = check.transitions;
  if (moves !== workload.expectedMoves)
    throw new Error(`${workload.name}: a turn made ${moves} moves, expected ${workload.expectedMoves}`);

  const bare = (): Promise<string | undefined> => bareTurn(agent, INPUT, ctx);
  const wrapped = (): Promise<unknown> => adapter.runTurn(INPUT);
  // The floor: the bare loop, and the turn's moves (as the adapter made them) on a bare machine.
  const turnMoves = adapter.machine.history().slice(-moves);
  const to = turnMoves.map((r) => r.to);
  const why = turnMoves.map((r) => r.description);
  const { StateMachine } = loadLibrary();
  const byHand = new StateMachine();
  for (const r of adapter.machine.history()) byHand.transition(r.to, r.description);
  const floor = async (): Promise<string | undefined> => {
    const text = await bareTurn(agent, INPUT, ctx);
    for (let i = 0; i < to.length; i++) byHand.transition(to[i]!, why[i]!);
    return text;
  };

  // Warm up past the JIT tiers, both sides, interleaved as they will be timed.
  for (let i = 0; i < WARMUP_TURNS; i += TURNS_PER_SAMPLE) {
    await sample(bare, TURNS_PER_SAMPLE);
    await sample(floor, TURNS_PER_SAMPLE);
    await sample(wrapped, TURNS_PER_SAMPLE);
    await yieldToEventLoop();
  }

  const bareSamples: number[] = [];
  const floorSamples: number[] = [];
  const wrappedSamples: number[] = [];
  const sides = [
    { run: bare, into: bareSamples },
    { run: floor, into: floorSamples },
    { run: wrapped, into: wrappedSamples },
  ];
  for (let s = 0; s < SAMPLES; s++) {
    // Rotate which side goes first, so none always follows another's garbage.
    for (let j = 0; j < sides.length; j++) {
      const side = sides[(j + s) % sides.length]!;
      side.into.push(await sample(side.run, TURNS_PER_SAMPLE));
    }
    await yieldToEventLoop();
  }

  // Every turn did the whole workload: the agent saw each call, the machine made each move.
  const turns = 1 + WARMUP_TURNS + SAMPLES * TURNS_PER_SAMPLE; // per side
  const expect = (what: string, got: number, want: number): void => {
    if (got !== want) throw new Error(`${workload.name}: ${what} ${got}, expected ${want}`);
  };
  expect('sendUserMessage calls', agent.counts.user, 3 * turns - 1);
  expect('runTool calls', agent.counts.tools, (3 * turns - 1) * workload.toolRounds);
  expect('sendToolResults calls', agent.counts.results, (3 * turns - 1) * workload.toolRounds);
  if (byHand.current !== 'EndOfTurn') throw new Error(`${workload.name}: floor machine ended in ${byHand.current}`);
  expect('LLM calls charged', adapter.usage.llmCalls, turns * (workload.toolRounds + 1));
  expect('moves recorded', adapter.machine.history().at(-1)?.seq ?? 0, turns * moves);
  if (adapter.machine.current !== 'EndOfTurn')
    throw new Error(`${workload.name}: machine ended in ${adapter.machine.current}`);

  const diffs = bareSamples.map((b, i) => wrappedSamples[i]! - b);
  return {
    workload: workload.name,
    moves,
    bareNs: median(bareSamples),
    wrappedNs: median(wrappedSamples),
    floorNs: median(floorSamples),
    ratios: wrappedSamples.map((w, i) => w / floorSamples[i]!),
    overheadP25: quantile(diffs, 0.25),
    overheadP75: quantile(diffs, 0.75),
    samples: SAMPLES,
  };
}

/** Takes one round of figures in this process. */
export async function measureRound(): Promise<WorkloadSample[]> {
  if (process.env.AGENT_SM_LOG_LEVEL !== undefined)
    throw new Error('unset AGENT_SM_LOG_LEVEL: the library must run at its default log level');
  const out: WorkloadSample[] = [];
  for (const workload of WORKLOADS) out.push(await measureWorkload(workload));
  return out;
}

const perMove = (s: WorkloadSample): number => (s.wrappedNs - s.bareNs) / s.moves;

/** Runs `rounds` fresh processes and reports medians, overhead per turn and per move. */
export async function run(rounds = Number(process.env.BENCH_ROUNDS ?? scaled(3, 1))): Promise<SuiteResult> {
  if (!Number.isInteger(rounds) || rounds < 1)
    throw new Error(`BENCH_ROUNDS must be a positive integer, got ${String(process.env.BENCH_ROUNDS)}`);
  console.log(`  library under test: ${describeLibrary()}`);
  console.log(
    `  wrapped: new AgentWithStateMachine(agent, { budget: { maxCostUsd: 1e9, strict: false } }) — default logger ('warn'), history 100`,
  );
  const byWorkload = new Map<string, WorkloadSample[]>(WORKLOADS.map((w) => [w.name, []]));
  for (let r = 0; r < rounds; r++) {
    const samples = await runInChild<WorkloadSample[]>(__filename, ['--measure']);
    for (const s of samples) {
      byWorkload.get(s.workload)!.push(s);
      console.log(
        `  round ${r + 1}/${rounds}  ${s.workload.padEnd(14)} bare ${formatNs(s.bareNs)}/turn, wrapped ${formatNs(s.wrappedNs)}/turn, ` +
          `${s.moves} moves: ${formatNs(perMove(s))}/move over bare (overhead/turn p25 ${formatNs(s.overheadP25)}, p75 ${formatNs(s.overheadP75)}, ${s.samples} samples × ${TURNS_PER_SAMPLE} turns)`,
      );
    }
  }

  const figures = WORKLOADS.map((w) => {
    const list = byWorkload.get(w.name)!;
    const moves = list[0]!.moves;
    // Overhead from each round's own pair (its bare and wrapped ran side by side), then the median.
    const overheadTurn = median(list.map((s) => s.wrappedNs - s.bareNs));
    return {
      workload: w,
      bareNs: median(list.map((s) => s.bareNs)),
      floorNs: median(list.map((s) => s.floorNs)),
      wrappedNs: median(list.map((s) => s.wrappedNs)),
      moves,
      overheadMove: overheadTurn / moves,
      ratio: ratioFigure(list.flatMap((s) => s.ratios)),
      perRound: list.map((s) => median(s.ratios)),
    };
  });

  return {
    suite: 'adapter',
    columns: ['bare /turn', 'floor /turn', 'wrapped /turn', 'moves', 'over bare /move', 'wrapped ÷ floor', 'per round'],
    rows: figures.map((f) => ({
      label: f.workload.label,
      cells: [
        formatNs(f.bareNs),
        formatNs(f.floorNs),
        formatNs(f.wrappedNs),
        String(f.moves),
        formatNs(f.overheadMove),
        formatRatioFigure(f.ratio),
        f.perRound.map(formatRatio).join(', '),
      ],
    })),
    targets: figures.map((f) =>
      ratioTarget(
        `adapter turn ÷ floor, ${f.workload.name} (${f.moves} moves)`,
        f.ratio,
        TARGET_RATIO,
        '(floor: the bare loop making the same moves by hand on a bare StateMachine)',
      ),
    ),
  };
}

if (require.main === module) {
  if (process.argv.includes('--measure')) {
    if (!serveChild(measureRound)) {
      measureRound().then((s) => console.log(s), failed);
    }
  } else {
    run().then(printSuite, failed);
  }
}
