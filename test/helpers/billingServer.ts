import fc from 'fast-check';
import { startOpenAIChatServer, type ChatAction, type OpenAIChatServer } from '../../examples/servers/openaiChatServer';
import { USD_PER_TOKEN } from './localPricing';

// A local Chat Completions server that bills like a provider: it answers every request it takes
// in full (every output token the request allows) and bills it, whether or not the client sees
// the answer. Per request a script picks what it does (a `Move`). The money tests run the real
// OpenAI client against it, in process and across worker processes.

/**
 * What the server does with one request: answer (`ok`); answer as a model id the prices lack
 * (`dated`) or whose pricing throws (`throws`); cut the stream before or after its usage chunk;
 * refuse before any work, billed nothing (`429`); fail after the work (`500`); answer after the
 * client's timeout (`late`); answer in full, billed, but report no usage (`noUsage`); or ignore
 * max tokens and answer twice them, billed in full (`overBound`, which a streamed call would
 * cut: give it to calls sent whole).
 */
export type Move =
  'ok' | 'dated' | 'throws' | 'cutBeforeUsage' | 'cutAfterUsage' | '429' | '500' | 'late' | 'noUsage' | 'overBound';

/** Every move but `overBound`, which only calls sent whole meet. */
export const STREAM_MOVES: readonly Move[] = [
  'ok',
  'dated',
  'throws',
  'cutBeforeUsage',
  'cutAfterUsage',
  '429',
  '500',
  'late',
  'noUsage',
];

/** What the server billed since `reset()`. */
export interface Billing {
  usd: number;
  /** What `overBound` answers billed past their requests' max output tokens, and how many there were. */
  overshotUsd: number;
  overshoots: number;
}

export interface BillingServer {
  server: OpenAIChatServer;
  /** Plays `script` from its start (request i gets `script[i % length]`) and zeroes the bill. */
  reset(script: readonly Move[]): void;
  readonly billing: Billing;
}

/** What the server bills for input: about one token per 4 characters of the body, as tokenizers do. */
const billedInput = (body: unknown): number => Math.ceil(JSON.stringify(body).length / 4);

/** Starts the server; `lateMs` is how late a `late` answer comes (past the client's timeout). */
export async function startBillingServer(lateMs: number): Promise<BillingServer> {
  let script: readonly Move[] = ['ok'];
  let requests = 0;
  const billing: Billing = { usd: 0, overshotUsd: 0, overshoots: 0 };
  const server = await startOpenAIChatServer({
    // It reports the usage each move gives, past the request's max too (`overBound`).
    ignoresMaxTokens: true,
    respond: (body: { max_completion_tokens?: number; max_tokens?: number }): ChatAction => {
      const move = script[requests++ % script.length]!;
      if (move === '429') return { error: { status: 429, message: 'Rate limit reached', type: 'requests' } };
      // LangChain's ChatOpenAI and the Agents SDK's Chat Completions model send max_tokens; the OpenAI loops send max_completion_tokens.
      const max = body.max_completion_tokens ?? body.max_tokens ?? 0;
      const over = move === 'overBound' ? max : 0;
      const usage = { prompt_tokens: billedInput(body), completion_tokens: max + over };
      billing.usd += (usage.prompt_tokens + usage.completion_tokens) * USD_PER_TOKEN;
      billing.overshotUsd += over * USD_PER_TOKEN;
      if (over > 0) billing.overshoots += 1;
      if (move === '500') return { error: { status: 500, message: 'The server had an error' } };
      const model = move === 'dated' ? 'gpt-local-2025-01-01' : move === 'throws' ? 'gpt-local-throws' : 'gpt-local';
      const dropAfterChunks = move === 'cutBeforeUsage' ? 1 : move === 'cutAfterUsage' ? 1000 : undefined;
      return {
        content: 'done',
        usage: move === 'noUsage' ? null : usage,
        model,
        ...(dropAfterChunks === undefined ? {} : { dropAfterChunks }),
        ...(move === 'late' ? { delayMs: lateMs } : {}),
      };
    },
  });
  return {
    server,
    billing,
    reset(next) {
      script = next;
      requests = 0;
      Object.assign(billing, { usd: 0, overshotUsd: 0, overshoots: 0 });
    },
  };
}

/** A batch's script: its calls streamed, or sent whole and then open to a server that ignores max tokens. */
export interface Script {
  moves: Move[];
  stream: boolean;
}

/** Scripts of 1 to `maxLength` moves, half of them streamed. */
export function billingScripts(maxLength: number): fc.Arbitrary<Script> {
  return fc.oneof(
    fc.record({
      moves: fc.array(fc.constantFrom(...STREAM_MOVES), { minLength: 1, maxLength }),
      stream: fc.constant(true),
    }),
    fc.record({
      moves: fc.array(fc.constantFrom<Move>(...STREAM_MOVES, 'overBound'), { minLength: 1, maxLength }),
      stream: fc.constant(false),
    }),
  );
}

/**
 * What answers past their bound billed beyond it that no run read: its client timed out before
 * the answer came (a loaded machine), so the library held the call at its worst case and never
 * saw the overshoot. A run that read one ends saying it passed its bound; each overshoot is the
 * same (the requests' max output tokens), so the unread ones are the rest of `overshotUsd`.
 */
export function unreadOvershootUsd(
  billing: Billing,
  runs: readonly { error?: { message?: string } | undefined }[],
): number {
  if (billing.overshoots === 0) return 0;
  const read = runs.filter((r) => /past its bound/.test(r.error?.message ?? '')).length;
  return (billing.overshotUsd / billing.overshoots) * Math.max(0, billing.overshoots - read);
}
