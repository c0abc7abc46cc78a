// The crash test of framework batches, one driver for every framework: a journaled `runBatch` of
// a framework's loops (a fixture of test/fixtures/batch run by killableFrameworkBatch.ts, the
// framework's real client) against a local server that bills every request it answers, killed
// with SIGKILL at points a seeded generator chooses — when request k+1 reaches the server, the
// first k answered — some twice in a row, then resumed in a new process. A cut-off run continues
// from its journal: the responses it had are served to the framework with no request, so no
// request whose answer reached a file is sent again.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadHistory } from '../../lib/history/loadHistory';
import { validateHistory } from '../../lib/history/validateHistory';
import { FRAMEWORK_CRASH_TASKS } from '../fixtures/batch/killableFrameworkBatch';
import { batchChild, CALL_USD, phasedBillingServer, type BillingApi } from './killableBatch';
import { seeded } from './seeded';

const TASKS = FRAMEWORK_CRASH_TASKS;
const CONCURRENCY = 3;
/**
 * Task n asks for 1 + n % 2 tools, then answers: the odd tasks want three calls, and
 * `perRun.maxLlmCalls` stops them after two (the third is refused, the run ends in
 * BudgetExceeded); the even ones make two. 16 calls, $0.16, if nothing else stopped the batch.
 * Each kill leaves up to CONCURRENCY calls in flight, charged at their whole hold ($0.01 each) and
 * asked again live: with those, the cap stops the batch before its last calls.
 */
const CAP_USD = 0.16;
const MAX_LLM_CALLS = 2;
const toolCalls = (task: number): number => 1 + (task % 2);
/** How long a settled kill waits for the answers sent to reach the files (most take a few ms). */
const SETTLE_MS = 250;
/**
 * The most answers a resumed batch is sure to reach after a first kill: request n+1 starts only
 * if its hold fits beside n answers, the first kill's lost calls (up to CONCURRENCY) and the other
 * calls in flight (up to CONCURRENCY − 1), at $0.01 each; one less, so that no sum of cents
 * rounded in binary decides it.
 */
const SURE_TO_REACH = Math.round(CAP_USD / CALL_USD) - 2 * CONCURRENCY - 1;

/** The framework under test. */
export interface CrashedFramework {
  /** Its batch fixture: test/fixtures/batch/<fixture>.ts. */
  fixture: string;
  /** How the fixture drives the framework (e.g. `generate`, `stream`), taken in turn by the scenarios. */
  variants: readonly string[];
  /** The wire protocol the local server speaks for a variant. Default: Chat Completions. */
  api?: (variant: string) => BillingApi;
  /** Packages the bundle takes from others (the SDK major the test process runs). */
  alias?: Record<string, string>;
  /** The seed of the kill points. */
  seed: number;
  /** Scenarios (default 18): every third is killed twice in a row, so 18 make 24 kills, as the adapter batch's crash test has. */
  scenarios?: number;
}

/**
 * Kill scenarios: after k answered requests, and in every third one a second kill of the resumed
 * batch after k2. Both stay within the cap's sure reach, so each kill comes. Half the kills come
 * at once, when answers the process has not yet written may be in flight; the other half once the
 * answers sent have had time to reach its files (`settled`), so that more cut-off runs continue
 * from journaled responses.
 */
function killPoints(framework: CrashedFramework): (readonly [number, number | null, string, boolean])[] {
  const random = seeded(framework.seed);
  return Array.from({ length: framework.scenarios ?? 18 }, (_, i) => {
    const k = 1 + Math.floor(random() * 8);
    const again = i % 3 === 2 ? Math.min(k + 1 + Math.floor(random() * 3), SURE_TO_REACH) : null;
    return [k, again, framework.variants[i % framework.variants.length]!, random() < 0.5] as const;
  });
}

/** The crash test of `framework`'s batches, as a `describe` of concurrent scenarios. */
export function describeFrameworkCrash(title: string, framework: CrashedFramework): void {
  jest.setTimeout(180_000);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), `agent-sm-${framework.fixture}-`));
  afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

  describe(`${title}: a journaled batch killed with SIGKILL and resumed in a new process`, () => {
    it.concurrent.each(killPoints(framework))(
      'killed after %i answered requests (and again after %p, variant %s, settled %s): no answered request sent again, caps held',
      async (k, again, variant, settled) => {
        const dir = fs.mkdtempSync(path.join(work, 'run-'));
        const llm = await phasedBillingServer(toolCalls, framework.api?.(variant));
        try {
          const atKills = await killAtPoints(work, framework, { dir, llm, variant, settled }, k, again);
          void llm.next(Infinity);
          const resumed = batchChild(work, args('resume', dir, llm, variant), framework.fixture, framework.alias);
          const exit = await resumed.exited;
          expect({ exit, stderr: exit.code === 0 ? '' : resumed.stderr() }).toEqual({
            exit: { code: 0, signal: null },
            stderr: '',
          });
          await expectResumedBatch(JSON.parse(resumed.stdout()) as ResumedReport, dir, llm.answered, atKills);
        } finally {
          await llm.server.close();
          fs.rmSync(dir, { recursive: true, force: true });
        }
      },
    );
  });
}

type Llm = Awaited<ReturnType<typeof phasedBillingServer>>;

/** The fixture's arguments for a process of `mode`; its phase, as its API key, so that the server answers only the live process. */
function args(mode: 'run' | 'resume', dir: string, llm: Llm, variant: string): string[] {
  const phase = `sk-phase-${llm.phase}`;
  return [mode, dir, llm.server.baseURL, String(CAP_USD), String(MAX_LLM_CALLS), variant, phase];
}

/** Kills the batch after `k` answered requests, and its resumed process after `again`; returns every file's text at each kill. */
async function killAtPoints(
  work: string,
  framework: CrashedFramework,
  run: { dir: string; llm: Llm; variant: string; settled: boolean },
  k: number,
  again: number | null,
): Promise<string[]> {
  const { dir, llm, variant, settled } = run;
  const atKills: string[] = [];
  for (const [mode, at] of again === null
    ? ([['run', k]] as const)
    : ([
        ['run', k],
        ['resume', again],
      ] as const)) {
    const heldRequest = llm.next(at);
    const proc = batchChild(work, args(mode, dir, llm, variant), framework.fixture, framework.alias);
    await Promise.race([
      heldRequest,
      proc.exited.then(({ code }) => {
        throw new Error(`the batch exited (${code}) before request ${at + 1}: ${proc.stderr()}`);
      }),
    ]);
    // The requests it sends meanwhile are held: nothing more is answered before the kill.
    if (settled) await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    proc.kill();
    expect((await proc.exited).signal).toBe('SIGKILL');
    expect(llm.answered).toHaveLength(at);
    atKills.push(
      fs
        .readdirSync(dir)
        .filter((f) => f.endsWith('.jsonl'))
        .map((f) => fs.readFileSync(path.join(dir, f), 'utf8'))
        .join('\n'),
    );
  }
  return atKills;
}

interface ResumedReport {
  runs: { id: string; outcome: string; resumed: string | null; error: unknown }[];
}

/**
 * The resumed batch's promises: every task reported once and every file valid; no request whose
 * answer reached a file sent again; `perRun.maxLlmCalls` held across the kills; billed within
 * the cap and the documented bound.
 */
async function expectResumedBatch(
  report: ResumedReport,
  dir: string,
  answered: Llm['answered'],
  atKills: string[],
): Promise<void> {
  expect(report.runs.map((r) => r.id).sort()).toEqual(Array.from({ length: TASKS }, (_, i) => `task-${i}`).sort());
  // Every run ends its turn or is stopped by a cap, and one that wants more calls than `perRun`
  // allows never ends its turn.
  for (const { id, outcome, error } of report.runs) {
    const capped = toolCalls(Number(id.slice('task-'.length))) >= MAX_LLM_CALLS;
    const expected = capped || outcome !== 'end_of_turn' ? 'budget_exceeded' : 'end_of_turn';
    expect({ id, outcome, error: outcome === expected ? undefined : error }).toEqual({ id, outcome: expected });
  }
  for (const name of fs.readdirSync(dir).filter((f) => f.endsWith('.jsonl') && !f.includes('.attempt')))
    expect(validateHistory((await loadHistory(path.join(dir, name))).entries).issues).toEqual([]);

  // No request whose answer reached a file is sent again by a later process: the cut-off runs
  // recovered from their journaled responses.
  for (const [i, files] of atKills.entries()) {
    const journaled = new Set(answered.filter((a) => a.phase <= i + 1 && files.includes(a.mark)).map((a) => a.hash));
    expect(answered.filter((a) => a.phase > i + 1 && journaled.has(a.hash))).toEqual([]);
  }
  // What a kill may lose: answers billed but not yet written when it came.
  const lost = answered.filter(
    (a) => a.phase <= atKills.length && !atKills.slice(a.phase - 1).some((files) => files.includes(a.mark)),
  );
  // perRun.maxLlmCalls holds across the kills (served calls count), but for those lost answers.
  for (let t = 0; t < TASKS; t++) {
    const id = `task-${t}`;
    const billed = answered.filter((a) => a.task === id).length;
    expect({ id, billed }).toEqual({
      id,
      billed: Math.min(billed, MAX_LLM_CALLS + lost.filter((a) => a.task === id).length),
    });
  }
  // Billed across the processes: within the cap and the documented bound (README, "Crash and
  // resume"): the calls in flight when the cap is reached, and for each kill the calls in flight.
  const billedUsd = answered.length * CALL_USD;
  expect(billedUsd).toBeLessThanOrEqual(CAP_USD + CONCURRENCY * CALL_USD * (1 + atKills.length) + 1e-9);
}
