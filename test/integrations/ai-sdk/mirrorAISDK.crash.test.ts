// Crash tests with real processes for framework runs: a journaled batch of AI SDK loops
// (`generateText` / `streamText` through `mirrorAISDK`, the real @ai-sdk/openai client) against a
// local server that bills every request it answers, killed with SIGKILL at points a seeded
// generator chooses — when request k+1 reaches the server, the first k answered — some twice in a
// row, then resumed in a new process. A cut-off run continues from its journal: the responses it
// had are served to the SDK with no request, so no request whose answer reached a file is sent again.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as ai from 'ai';
import { buildSync } from 'esbuild';
import { startOpenAIChatServer, type ChatAction } from '../../../examples/servers/openaiChatServer';
import { loadHistory } from '../../../lib/history/loadHistory';
import { validateHistory } from '../../../lib/history/validateHistory';
import { seeded } from '../../helpers/seeded';

jest.setTimeout(180_000);

const TASKS = 8;
const CONCURRENCY = 3;
const CALL_USD = 0.01;
/**
 * Two calls a run (a tool call, then the answer): 16 calls, $0.16, if nothing stopped the batch.
 * Each kill leaves up to CONCURRENCY calls in flight, charged at their whole hold ($0.01 each) and
 * asked again live: with those, the cap stops the batch before its last calls.
 */
const CAP_USD = 0.16;
const MAX_LLM_CALLS = 2;
/** ai 7 has `isStepCount`; the child is bundled against the same major as this project's `ai`. */
const AI7 = 'isStepCount' in ai;

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-aicrash-'));
let bundle: string | undefined;
/** One bundle (of the SDK major this project runs), so that no child compiles TypeScript. */
function bundled(): string {
  if (bundle !== undefined) return bundle;
  const out = path.join(work, 'aiSdkBatchToKill.cjs');
  buildSync({
    entryPoints: [path.join(__dirname, '..', '..', 'fixtures', 'batch', 'aiSdkBatchToKill.ts')],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    outfile: out,
    tsconfig: path.join(__dirname, '..', '..', '..', 'tsconfig.json'),
    logLevel: 'silent',
    ...(AI7 ? { alias: { ai: 'ai-7', '@ai-sdk/openai': '@ai-sdk/openai-4' } } : {}),
  });
  return (bundle = out);
}
afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

/** A request the server answered: its body's hash, its task, the process that sent it, and the mark its answer carries. */
interface Answered {
  hash: string;
  task: string;
  phase: number;
  /** Text only this answer carries (its tool call id, or its content), to find it in the files. */
  mark: string;
}

/** The local LLM: answers a tool call, then (once a tool result is in) a final text; bills each answer. */
async function billingServer() {
  const answered: Answered[] = [];
  let phase = 0;
  let holdAt = Infinity;
  let held: (() => void) | undefined;
  let n = 0;
  const server = await startOpenAIChatServer({
    respond: (
      body: { messages: { role: string; content?: unknown }[] },
      _index: number,
      apiKey: string,
    ): ChatAction | Promise<ChatAction> => {
      // A request of a killed process that the server (busy under load) reads only after the
      // kill is never answered: its client is gone, as a request in flight at the kill is.
      if (answered.length >= holdAt || apiKey !== `sk-phase-${phase}`) {
        held?.();
        return new Promise<ChatAction>(() => undefined); // never answered: the process is killed first
      }
      n += 1;
      const hash = createHash('sha256').update(JSON.stringify(body)).digest('hex');
      const user = body.messages.find((m) => m.role === 'user');
      const task = /task (\d+)/.exec(JSON.stringify(user?.content ?? ''))?.[1] ?? '?';
      const usage = { prompt_tokens: 100, completion_tokens: 10 };
      const hasResult = body.messages.some((m) => m.role === 'tool');
      const reply: ChatAction = hasResult
        ? { content: `answer-${n}-x`, usage }
        : { toolCalls: [{ id: `call_${n}_x`, name: 'lookup', arguments: '{}' }], usage };
      answered.push({ hash, task: `task-${task}`, phase, mark: hasResult ? `answer-${n}-x` : `call_${n}_x` });
      return reply;
    },
  });
  return {
    server,
    answered,
    /** The next process: its requests past the `at`-th answered one are held (never answered). */
    next(at: number): Promise<void> {
      phase += 1;
      holdAt = at;
      return new Promise<void>((resolve) => (held = resolve));
    },
  };
}

function child(args: string[]) {
  const proc = spawn(process.execPath, [bundled(), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  proc.stdout.on('data', (c: Buffer) => (out += c.toString()));
  proc.stderr.on('data', (c: Buffer) => (err += c.toString()));
  // 'close', not 'exit': the pipes are drained by then.
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
    proc.on('close', (code, signal) => resolve({ code, signal })),
  );
  return { exited, kill: () => proc.kill('SIGKILL'), stdout: () => out, stderr: () => err };
}

const random = seeded(7);
/**
 * The most answers a resumed batch is sure to reach after a first kill: request n+1 starts only
 * if its hold fits beside n answers, the first kill's lost calls (up to CONCURRENCY) and the other
 * calls in flight (up to CONCURRENCY − 1), at $0.01 each; one less, so that no sum of cents
 * rounded in binary decides it.
 */
const SURE_TO_REACH = Math.round(CAP_USD / CALL_USD) - 2 * CONCURRENCY - 1;
// Twelve kill scenarios: after k answered requests, and in every third one a second kill of the
// resumed batch after k2; streamed and not. Both stay within the cap's sure reach, so each kill comes.
const KILLS = Array.from({ length: 12 }, (_, i) => {
  const k = 1 + Math.floor(random() * 8);
  const again = i % 3 === 2 ? Math.min(k + 1 + Math.floor(random() * 3), SURE_TO_REACH) : undefined;
  return [k, again ?? null, i % 2 === 1] as const;
});

describe('a journaled batch of AI SDK loops, killed with SIGKILL and resumed in a new process', () => {
  it.concurrent.each(KILLS)(
    'killed after %i answered requests (and again after %p, streamed %s): no answered request sent again, caps held',
    async (k, again, streamed) => {
      const dir = fs.mkdtempSync(path.join(work, 'run-'));
      const llm = await billingServer();
      const args = (mode: string): string[] => [
        mode,
        dir,
        llm.server.baseURL,
        String(CAP_USD),
        String(MAX_LLM_CALLS),
        streamed ? 'stream' : 'generate',
        // The process's phase, as its API key: the server answers only the live process.
        `sk-phase-${mode === 'run' ? 1 : atKills.length + 1}`,
      ];
      /** Every file's text at each kill: what reached the files. */
      const atKills: string[] = [];
      const killAt = async (mode: string, at: number): Promise<void> => {
        const heldRequest = llm.next(at);
        const proc = child(args(mode));
        await Promise.race([
          heldRequest,
          proc.exited.then(({ code }) => {
            throw new Error(`the batch exited (${code}) before request ${at + 1}: ${proc.stderr()}`);
          }),
        ]);
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
      };
      try {
        await killAt('run', k);
        if (again !== null) await killAt('resume', again);
        void llm.next(Infinity);
        const resumed = child(args('resume'));
        const exit = await resumed.exited;
        expect({ exit, stderr: exit.code === 0 ? '' : resumed.stderr() }).toEqual({
          exit: { code: 0, signal: null },
          stderr: '',
        });
        const report = JSON.parse(resumed.stdout()) as {
          runs: { id: string; outcome: string; resumed: string | null }[];
        };
        // Every task reported exactly once, every file valid.
        expect(report.runs.map((r) => r.id).sort()).toEqual(
          Array.from({ length: TASKS }, (_, i) => `task-${i}`).sort(),
        );
        for (const name of fs.readdirSync(dir).filter((f) => f.endsWith('.jsonl') && !f.includes('.attempt')))
          expect(validateHistory((await loadHistory(path.join(dir, name))).entries).issues).toEqual([]);

        // No request whose answer reached a file is sent again by a later process: the cut-off
        // runs continued from their journaled responses.
        for (const [i, files] of atKills.entries()) {
          const journaled = new Set(
            llm.answered.filter((a) => a.phase <= i + 1 && files.includes(a.mark)).map((a) => a.hash),
          );
          expect(llm.answered.filter((a) => a.phase > i + 1 && journaled.has(a.hash))).toEqual([]);
        }
        // What a kill may lose: answers billed but not yet written when it came.
        const lost = llm.answered.filter(
          (a) => a.phase <= atKills.length && !atKills.slice(a.phase - 1).some((files) => files.includes(a.mark)),
        );
        // perRun.maxLlmCalls holds across the kills (served calls count), but for those lost answers.
        for (let t = 0; t < TASKS; t++) {
          const id = `task-${t}`;
          const billed = llm.answered.filter((a) => a.task === id).length;
          expect({ id, billed }).toEqual({
            id,
            billed: Math.min(billed, MAX_LLM_CALLS + lost.filter((a) => a.task === id).length),
          });
        }
        // Billed across the processes: within the cap and the documented bound (README, "Crash and
        // resume"): the calls in flight when the cap is reached, and for each kill the calls in flight.
        const billedUsd = llm.answered.length * CALL_USD;
        expect(billedUsd).toBeLessThanOrEqual(CAP_USD + CONCURRENCY * CALL_USD * (1 + atKills.length) + 1e-9);
      } finally {
        await llm.server.close();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});
