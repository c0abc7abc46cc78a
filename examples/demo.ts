/**
 * `npm run demo`: a scripted coding agent, offline and without keys, driven through the
 * sixteen states by AgentWithStateMachine. Five turns: a text-only answer; tool rounds with
 * a git commit and formatters; a turn cancelled mid-tool; an LLM that keeps failing; and a
 * turn that hits the budget. Each move is printed as it happens, then the history and usage.
 */
import { AgentWithStateMachine, createScriptedAgent, formatHistory, type Sleep, type TurnResult } from '../lib/index';
import { formatDuration } from '../lib/internal/formatDuration';
import { setTimeout as delay } from 'node:timers/promises';

// Waits, or stops waiting when the signal aborts (the adapter's cancellation grace relies on that).
const realSleep: Sleep = (ms, signal) => delay(ms, undefined, signal ? { signal } : {}).catch(() => undefined);

export interface DemoOptions {
  /** How the scripted agent and the adapter wait. Default: real time. */
  sleep?: Sleep;
  /** Where lines go. Default: console.log. */
  print?: (line: string) => void;
  clock?: () => number;
}

const usd = (n: number): string => `$${n.toFixed(3)}`;
const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

export async function runDemo(options: DemoOptions = {}): Promise<TurnResult[]> {
  const wait = options.sleep ?? realSleep;
  const print = options.print ?? ((line: string) => console.log(line));
  let adapter: AgentWithStateMachine | undefined;

  const agent = createScriptedAgent({
    sleep: wait,
    replies: [
      // Turn 1: text only.
      {
        text: 'The repository is a TypeScript library; tests live in test/.',
        usage: { inputTokens: 1200, outputTokens: 40, costUsd: 0.004 },
        delayMs: 120,
      },
      // Turn 2: two tool rounds; the edit makes a commit that the formatters touch up.
      {
        toolCalls: [{ id: 'toolu_01', name: 'read_file', input: { path: 'lib/parse.ts' } }],
        usage: { inputTokens: 1500, outputTokens: 60, costUsd: 0.006 },
        delayMs: 150,
      },
      {
        toolCalls: [
          { id: 'toolu_02', name: 'edit_file', input: { path: 'lib/parse.ts' } },
          { id: 'toolu_03', name: 'git_commit' },
        ],
        usage: { inputTokens: 2100, outputTokens: 220, costUsd: 0.011 },
        delayMs: 180,
      },
      {
        text: 'Fixed the off-by-one in parse() and committed it.',
        usage: { inputTokens: 2600, outputTokens: 50, costUsd: 0.009 },
        delayMs: 100,
      },
      // Turn 3: the user presses Ctrl-C while the tests run.
      {
        toolCalls: [
          { id: 'toolu_04', name: 'run_tests' },
          { id: 'toolu_05', name: 'read_file', input: { path: 'README.md' } },
        ],
        usage: { inputTokens: 2800, outputTokens: 45, costUsd: 0.009 },
        delayMs: 110,
      },
      // Turn 4: the LLM is overloaded on every attempt.
      { error: '529 overloaded_error', delayMs: 60 },
      { error: '529 overloaded_error', delayMs: 60 },
      { error: '529 overloaded_error', delayMs: 60 },
      // Turn 5: an expensive tool loop that runs into the budget.
      {
        toolCalls: [{ id: 'toolu_06', name: 'search', input: { query: 'TODO' } }],
        usage: { inputTokens: 9000, outputTokens: 300, costUsd: 0.03 },
        delayMs: 140,
      },
      {
        toolCalls: [{ id: 'toolu_07', name: 'search', input: { query: 'FIXME' } }],
        usage: { inputTokens: 9500, outputTokens: 300, costUsd: 0.032 },
        delayMs: 140,
      },
      { text: 'never reached: the budget stops the loop first', delayMs: 100 },
    ],
    tools: {
      read_file: { output: 'export function parse(s: string) { … }', delayMs: 30 },
      edit_file: { output: 'lib/parse.ts: 1 line changed', delayMs: 40 },
      git_commit: { output: '[main 3f2a9c1] Fix off-by-one in parse()', delayMs: 60 },
      search: { output: '14 matches', delayMs: 50 },
      run_tests: async (call, ctx) => {
        await wait(200);
        adapter?.cancel('user pressed Ctrl-C'); // what a terminal's SIGINT handler would do
        await wait(600, ctx.signal);
        if (ctx.signal.aborted) throw new Error('test run interrupted');
        return { callId: call.id, output: 'all tests passed' };
      },
    },
    commits: [[], ['3f2a9c1'], [], [], [], []],
    formatterMessages: ['prettier rewrote lib/parse.ts in 3f2a9c1 (2 lines)'],
    additionalMessages: [[], ['(user, while tools ran) please keep the public API unchanged'], [], []],
  });

  adapter = new AgentWithStateMachine(agent, {
    budget: { maxCostUsd: 0.1, strict: false }, // a plain cap: the scripted loop bounds no call
    retry: { retries: 2, baseDelayMs: 100 },
    sleep: wait,
    logger: false, // the demo prints moves itself; set AGENT_SM_LOG_LEVEL=debug and drop this line to see winston's
    ...(options.clock === undefined ? {} : { clock: options.clock }),
  });

  let rejected = 0;
  adapter.machine.on('rejected', () => (rejected += 1));
  adapter.machine.onTransition((r) => {
    const mark = r.forced ? ' (forced)' : '';
    print(`  ${formatDuration(r.durationMs).padStart(8)}  ${r.from} → ${r.to}${mark}  ${r.description}`);
  });

  const turns = [
    'What is in this repository?',
    'Fix the off-by-one in parse() and commit it.',
    'Run the test suite.',
    'Summarize the failures.',
    'Find every TODO and FIXME and fix them all.',
  ];
  const results: TurnResult[] = [];
  for (const [i, input] of turns.entries()) {
    print(`\nTurn ${i + 1}: ${JSON.stringify(input)}`);
    const result = await adapter.runTurn(input);
    results.push(result);
    const why = result.text ?? result.error?.message ?? '';
    print(
      `  => ${result.outcome}: ${why}  [${usd(result.usage.costUsd)}, ${plural(result.usage.llmCalls, 'LLM call')}, ${plural(result.usage.toolCalls, 'tool call')}]`,
    );
  }

  print('\nHistory (the last 100 moves are kept in memory; a sink can keep them all):');
  print(formatHistory(adapter.machine.history(), { data: false }));
  const u = adapter.usage;
  print(
    `\nUsage: ${usd(u.costUsd)} of ${usd(adapter.budget.maxCostUsd ?? Infinity)}, ${(u.inputTokens + u.outputTokens).toLocaleString('en-US')} tokens, ` +
      `${u.llmCalls} LLM calls, ${u.toolCalls} tool calls, ${formatDuration(u.wallMs)} in turns`,
  );
  const forced = adapter.machine.history().filter((r) => r.forced).length;
  print(
    `Moves: ${adapter.machine.history().length}, forced: ${forced} (cancellations outside CheckingForCancellation), rejected: ${rejected}`,
  );
  print(
    "\nKeep every move in a file (`sink: JsonlHistorySink.open('run.jsonl')`) and read it later: `npx agent-sm inspect run.jsonl`,",
  );
  print(
    'or `npx agent-sm report run.jsonl` for one HTML page with the timeline, the failure, where the time and money went.',
  );
  return results;
}

if (require.main === module) {
  runDemo().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
