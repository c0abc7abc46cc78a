/* eslint-disable @typescript-eslint/no-explicit-any -- request bodies are untyped JSON */
// The crash tests' pieces: a batch fixture as a child process (bundled once, so no child
// compiles TypeScript), and the local LLM that bills each answer and holds request k+1 until the
// test kills the child, process after process.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as path from 'node:path';
import { buildSync } from 'esbuild';
import { startOpenAIChatServer, type ChatAction } from '../../examples/servers/openaiChatServer';
import { startOpenAIResponsesServer, type ResponsesAction } from '../../examples/servers/openaiResponsesServer';

/** What the server bills for each response it sends, and what the response reports as its cost. */
export const CALL_USD = 0.01;

/** A server request, as the billing sees it: the body's hash, its task, the process that sent it, and the mark its answer carries. */
export interface Answered {
  hash: string;
  /** `task-<n>`, from the `task <n>` of its user message. */
  task: string;
  /** The process that sent it: 1 for the first, one more for each `next()`. */
  phase: number;
  /** Text only this answer carries (its tool call id, or its content), to find it in the records. */
  mark: string;
}

/** A Chat Completions request's body, as the server reads it. */
export interface ChatBody {
  messages: { role: string; content?: unknown }[];
}

/** The wire protocol the local LLM speaks: Chat Completions, or Responses. */
export type BillingApi = 'chat' | 'responses';

/** A request's facts, as the billing reads them in either protocol. */
function requestFacts(body: any, api: BillingApi): { user: unknown; toolResults: number } {
  const items: { role?: string; type?: string }[] =
    api === 'chat' ? body.messages : typeof body.input === 'string' ? [{ role: 'user' }] : body.input;
  return {
    user: api === 'responses' && typeof body.input === 'string' ? body.input : items.find((m) => m.role === 'user'),
    toolResults: items.filter((m) => (api === 'chat' ? m.role === 'tool' : m.type === 'function_call_output')).length,
  };
}

/**
 * The local LLM: answers a tool call (`lookup`), then (once `toolCalls(n)` tool results of task n
 * are in, default one) a final text; bills each answer. Each process the test starts is a phase
 * (`next`): past its `at`-th answered request, the server holds requests (never answers them: the
 * process is killed first). A client whose API key is `sk-phase-<n>` is answered only in phase n:
 * a request of a killed process that the server (busy under load) reads only after the kill is
 * never answered, as a request in flight at the kill is not.
 */
export async function phasedBillingServer(toolCalls: (task: number) => number = () => 1, api: BillingApi = 'chat') {
  const answered: Answered[] = [];
  /** Every request that reached the server, answered or held: what a provider that bills on receipt bills. */
  const received = { count: 0 };
  let phase = 1;
  let holdAt = Infinity;
  let holdOne = false;
  let held: ((body: unknown) => void) | undefined;
  let n = 0;
  /** The answer's mark, and whether it is the final text; undefined: held. */
  const bill = (body: unknown, apiKey: string): { mark: string; answers: boolean } | undefined => {
    received.count += 1;
    const { user, toolResults } = requestFacts(body, api);
    if (apiKey.startsWith('sk-phase-') && apiKey !== `sk-phase-${phase}`) return undefined;
    if (answered.length >= holdAt && (!holdOne || toolResults > 0)) {
      if (holdOne) holdAt = Infinity;
      held?.(body);
      return undefined;
    }
    n += 1;
    // A Responses item's own id is the provider's, which a journal does not keep: the same
    // request again may carry another (its `call_id` stays).
    const text = JSON.stringify(body, (key, value: unknown) =>
      api === 'responses' && key === 'id' ? undefined : value,
    );
    const hash = createHash('sha256').update(text).digest('hex');
    const task = /task (\d+)/.exec(JSON.stringify(user ?? ''))?.[1] ?? '?';
    const answers = toolResults >= toolCalls(Number(task));
    const mark = answers ? `answer-${n}-x` : `call_${n}_x`;
    answered.push({ hash, task: `task-${task}`, phase, mark });
    return { mark, answers };
  };
  /** The server's `respond`: the answer in the protocol's shape (`shape`), or held (never answered). */
  const respond =
    <A>(shape: (mark: string, answers: boolean) => A) =>
    (body: unknown, _index: number, apiKey: string): A | Promise<A> => {
      const billed = bill(body, apiKey);
      return billed === undefined ? new Promise<A>(() => undefined) : shape(billed.mark, billed.answers);
    };
  const chat = { prompt_tokens: 100, completion_tokens: 10, cost: CALL_USD };
  const responses = { input_tokens: 100, output_tokens: 10, cost: CALL_USD };
  const server: { baseURL: string; close(): Promise<void> } =
    api === 'chat'
      ? await startOpenAIChatServer({
          respond: respond<ChatAction>((mark, answers) =>
            answers
              ? { content: mark, usage: chat }
              : { toolCalls: [{ id: mark, name: 'lookup', arguments: '{}' }], usage: chat },
          ),
        })
      : await startOpenAIResponsesServer({
          respond: respond<ResponsesAction>((mark, answers) =>
            answers
              ? { text: mark, usage: responses }
              : { toolCalls: [{ callId: mark, name: 'lookup', arguments: '{}' }], usage: responses },
          ),
        });
  let started = false;
  return {
    server,
    answered,
    /** Requests that reached the server, answered or held (a held one may have been billed: its sender never learns). */
    get received(): number {
      return received.count;
    },
    /** The phase of the process the test starts next (the first is 1). */
    get phase(): number {
      return phase;
    },
    /**
     * The next process: resolves with the body of the first request past the `at`-th answered one
     * to reach the server. With `one`, only the first such request that carries a tool result is
     * held, for good (its sender is killed); the others are answered.
     */
    next<B = unknown>(at: number, one = false): Promise<B> {
      if (started) phase += 1;
      started = true;
      holdAt = at;
      holdOne = one;
      return new Promise<B>((resolve) => (held = resolve as (body: unknown) => void));
    },
  };
}

/**
 * One kill: a process held at request `holdAfter` + 1 (`heldRequest`, its body), or with
 * `holdOne` at the first such request that carries a tool result; then (`resume()`) a process
 * answered in full.
 */
export async function billingServer(holdAfter: number, options: { holdOne?: boolean } = {}) {
  const llm = await phasedBillingServer();
  const heldRequest = llm.next<ChatBody>(holdAfter, options.holdOne === true);
  return { server: llm.server, answered: llm.answered, heldRequest, resume: () => void llm.next(Infinity) };
}

const bundles = new Map<string, string>();

/**
 * test/fixtures/batch/`fixture`.ts bundled into `dir` by the first test that needs it (concurrent
 * tests do not wait for beforeAll); `alias` maps packages to others (an SDK's other major).
 */
function bundled(dir: string, fixture: string, alias: Record<string, string>): string {
  const done = bundles.get(fixture);
  if (done !== undefined) return done;
  const out = path.join(dir, `${fixture}.cjs`);
  buildSync({
    entryPoints: [path.join(__dirname, '..', 'fixtures', 'batch', `${fixture}.ts`)],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    outfile: out,
    tsconfig: path.join(__dirname, '..', '..', 'tsconfig.json'),
    logLevel: 'silent',
    alias,
  });
  bundles.set(fixture, out);
  return out;
}

/** A batch fixture (default llmBatchToKill) as a child process, with `args`; its bundle is kept in `work`. */
export function batchChild(
  work: string,
  args: string[],
  fixture = 'llmBatchToKill',
  alias: Record<string, string> = {},
): {
  exited: Promise<{ code: number | null; signal: string | null }>;
  kill(): void;
  stdout(): string;
  stderr(): string;
} {
  const proc = spawn(process.execPath, [bundled(work, fixture, alias), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
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
