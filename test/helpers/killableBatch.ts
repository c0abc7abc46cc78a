// The crash tests' pieces for test/fixtures/batch/llmBatchToKill.ts: the child process (bundled
// once, so no child compiles TypeScript), and the local LLM that bills each answer and holds
// request k+1 until the test kills the child.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as path from 'node:path';
import { buildSync } from 'esbuild';
import { startOpenAIChatServer, type ChatAction } from '../../examples/servers/openaiChatServer';

/** What the server bills for each response it sends, and what the response reports as its cost. */
export const CALL_USD = 0.01;

/** A server request, as the billing sees it: the body's hash, the phase, and the mark its answer carries. */
export interface Answered {
  hash: string;
  phase: 'killed' | 'resumed';
  /** Text only this answer carries (its tool call id, or its content), to find it in the records. */
  mark: string;
}

/** A request's body, as the server reads it. */
export interface ChatBody {
  messages: { role: string; content?: unknown }[];
}

/**
 * The local LLM: answers a tool call, then (once the tool result is in) a final text; bills each
 * answer. Holds every request after `holdAfter` answered ones until `resume()` (`heldRequest`
 * resolves with the first one's body), or with `holdOne` only the first such request that
 * carries a tool result, for good (its sender is killed), answering the others.
 */
export async function billingServer(holdAfter: number, options: { holdOne?: boolean } = {}) {
  const answered: Answered[] = [];
  let phase: Answered['phase'] = 'killed';
  let held!: (body: ChatBody) => void;
  let holding = true;
  const heldRequest = new Promise<ChatBody>((resolve) => (held = resolve));
  let n = 0;
  const server = await startOpenAIChatServer({
    respond: (body: ChatBody): ChatAction | Promise<ChatAction> => {
      const hasToolResult = body.messages.some((m) => m.role === 'tool');
      if (
        phase === 'killed' &&
        holding &&
        answered.length >= holdAfter &&
        (options.holdOne !== true || hasToolResult)
      ) {
        if (options.holdOne === true) holding = false;
        held(body);
        return new Promise<ChatAction>(() => undefined); // never answered: the process is killed first
      }
      n += 1;
      const hash = createHash('sha256').update(JSON.stringify(body)).digest('hex');
      const usage = { prompt_tokens: 100, completion_tokens: 10, cost: CALL_USD };
      const reply: ChatAction = hasToolResult
        ? { content: `answer-${n}`, usage }
        : { toolCalls: [{ id: `call_${n}_x`, name: 'lookup', arguments: '{}' }], usage };
      answered.push({ hash, phase, mark: hasToolResult ? `answer-${n}` : `call_${n}_x` });
      return reply;
    },
  });
  return {
    server,
    answered,
    heldRequest,
    resume: () => void (phase = 'resumed'),
  };
}

let bundle: string | undefined;

/** The fixture bundled into `dir` by the first test that needs it (concurrent tests do not wait for beforeAll). */
function bundled(dir: string): string {
  if (bundle !== undefined) return bundle;
  const out = path.join(dir, 'llmBatchToKill.cjs');
  buildSync({
    entryPoints: [path.join(__dirname, '..', 'fixtures', 'batch', 'llmBatchToKill.ts')],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    outfile: out,
    tsconfig: path.join(__dirname, '..', '..', 'tsconfig.json'),
    logLevel: 'silent',
  });
  return (bundle = out);
}

/** The batch fixture as a child process, with `args`; its bundle is kept in `work`. */
export function batchChild(
  work: string,
  args: string[],
): {
  exited: Promise<{ code: number | null; signal: string | null }>;
  kill(): void;
  stdout(): string;
  stderr(): string;
} {
  const proc = spawn(process.execPath, [bundled(work), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  proc.stdout.on('data', (c: Buffer) => (out += c.toString()));
  proc.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
    proc.on('close', (code, signal) => resolve({ code, signal })),
  );
  return { exited, kill: () => proc.kill('SIGKILL'), stdout: () => out, stderr: () => err };
}
