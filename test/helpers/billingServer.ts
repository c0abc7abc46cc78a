import fc from 'fast-check';
import { startAnthropicMessagesServer, type MessagesAction } from '../../examples/servers/anthropicMessagesServer';
import { startOpenAIChatServer, type ChatAction } from '../../examples/servers/openaiChatServer';
import { startOpenAIResponsesServer, type ResponsesAction } from '../../examples/servers/openaiResponsesServer';
import { USD_PER_TOKEN } from './localPricing';

// A local server that bills like a provider, on the Chat Completions wire (or OpenAI Responses,
// or Anthropic Messages): it answers every request it takes in full (every output token the
// request allows) and bills it, whether or not the client sees the answer. Per request a script
// picks what it does (a `Move`). The money tests run the real SDK clients against it, in
// process and across worker processes.

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
  /**
   * What the answers a client reads whole with their usage billed: the part of `usd` a report
   * must call billed, to the cent (`ok` and `overBound`; `noUsage` on Anthropic, which reports
   * usage anyway; a cut move sent whole, which only streams cut; and a Chat Completions stream
   * cut after its usage chunk). It counts an answer when it is sent, so it holds only where no
   * client gives up first, and every answer's model is priced: the moves of `onTimeScripts`.
   */
  answeredUsd: number;
}

/** What every wire server here has: its address, what it took, and what it rejected as the real API would. */
export interface WireServer {
  baseURL: string;
  readonly exchanges: readonly unknown[];
  readonly rejected: readonly unknown[];
  close(): Promise<void>;
}

export interface BillingServer {
  server: WireServer;
  /** Plays `script` from its start (request i gets `script[i % length]`) and zeroes the bill. */
  reset(script: readonly Move[]): void;
  readonly billing: Billing;
}

/** The wire protocol the server speaks: OpenAI Chat Completions, OpenAI Responses, or Anthropic Messages. */
export type Protocol = 'chat' | 'responses' | 'anthropic';

/** What the server bills for input: about one token per 4 characters of the body, as tokenizers do. */
const billedInput = (body: unknown): number => Math.ceil(JSON.stringify(body).length / 4);

/** What a move answers, before it is put in a protocol's words: an error, or an answer with its usage and its ways. */
type Answer =
  | { error: 429 | 500 }
  | { usage: { input: number; output: number } | null; model: string; cutAfter?: 'early' | 'late'; delayMs?: number };

/**
 * Starts the server; `lateMs` is how late a `late` answer comes (past the client's timeout).
 * `protocol` (default `chat`) picks the wire; a move means the same on each but where the wire
 * cannot say it. Anthropic always reports usage, so there `noUsage` answers with it; its server
 * stops at `max_tokens`, so `overBound` bills only that. OpenAI Responses reports usage in its
 * last event and Anthropic its output in `message_delta`, so on both a cut comes before the
 * answer's whole usage (`cutAfterUsage` only cuts later).
 */
export async function startBillingServer(lateMs: number, protocol: Protocol = 'chat'): Promise<BillingServer> {
  let script: readonly Move[] = ['ok'];
  let requests = 0;
  const billing: Billing = { usd: 0, overshotUsd: 0, overshoots: 0, answeredUsd: 0 };
  // The move for the next request, billed as a provider would bill it.
  const answer = (body: unknown, max: number, capsOutput: boolean): Answer => {
    const move = script[requests++ % script.length]!;
    if (move === '429') return { error: 429 };
    const over = move === 'overBound' && !capsOutput ? max : 0;
    const usage = { input: billedInput(body), output: max + over };
    billing.usd += (usage.input + usage.output) * USD_PER_TOKEN;
    billing.overshotUsd += over * USD_PER_TOKEN;
    if (over > 0) billing.overshoots += 1;
    if (move === '500') return { error: 500 };
    if (readWhole(move, protocol, body as WireBody))
      billing.answeredUsd += (usage.input + usage.output) * USD_PER_TOKEN;
    const model = move === 'dated' ? 'gpt-local-2025-01-01' : move === 'throws' ? 'gpt-local-throws' : 'gpt-local';
    return {
      usage: move === 'noUsage' && protocol !== 'anthropic' ? null : usage,
      model,
      ...(move === 'cutBeforeUsage' ? { cutAfter: 'early' as const } : {}),
      ...(move === 'cutAfterUsage' ? { cutAfter: 'late' as const } : {}),
      ...(move === 'late' ? { delayMs: lateMs } : {}),
    };
  };
  const server =
    protocol === 'chat'
      ? await chatServer(answer)
      : protocol === 'responses'
        ? await responsesServer(answer)
        : await anthropicServer(answer);
  return {
    server,
    billing,
    reset(next) {
      script = next;
      requests = 0;
      Object.assign(billing, { usd: 0, overshotUsd: 0, overshoots: 0, answeredUsd: 0 });
    },
  };
}

/** What `readWhole` reads of a request's body. */
type WireBody = { stream?: boolean; stream_options?: { include_usage?: boolean } };

/** Whether a move's answer reaches the client whole, with its usage (`Billing.answeredUsd`). */
function readWhole(move: Move, protocol: Protocol, body: WireBody): boolean {
  const stream = body.stream === true;
  switch (move) {
    case 'ok':
    case 'overBound':
    case 'dated':
    case 'throws':
      return true;
    case 'noUsage':
      return protocol === 'anthropic';
    case 'cutBeforeUsage':
      return !stream;
    case 'cutAfterUsage':
      // Chat Completions sends its usage chunk (when asked for) last, before [DONE]; the other wires send usage in the cut part.
      return !stream || (protocol === 'chat' && body.stream_options?.include_usage === true);
    default:
      return false;
  }
}

type Answering = (body: unknown, max: number, capsOutput: boolean) => Answer;

function chatServer(answer: Answering): Promise<WireServer> {
  return startOpenAIChatServer({
    // It reports the usage each move gives, past the request's max too (`overBound`).
    ignoresMaxTokens: true,
    respond: (body: { max_completion_tokens?: number; max_tokens?: number }): ChatAction => {
      // LangChain's ChatOpenAI and the Agents SDK's Chat Completions model send max_tokens; the OpenAI loops send max_completion_tokens.
      const a = answer(body, body.max_completion_tokens ?? body.max_tokens ?? 0, false);
      if ('error' in a)
        return a.error === 429
          ? { error: { status: 429, message: 'Rate limit reached', type: 'requests' } }
          : { error: { status: 500, message: 'The server had an error' } };
      return {
        content: 'done',
        usage: a.usage === null ? null : { prompt_tokens: a.usage.input, completion_tokens: a.usage.output },
        model: a.model,
        ...(a.cutAfter === undefined ? {} : { dropAfterChunks: a.cutAfter === 'early' ? 1 : 1000 }),
        ...(a.delayMs === undefined ? {} : { delayMs: a.delayMs }),
      };
    },
  });
}

function responsesServer(answer: Answering): Promise<WireServer> {
  return startOpenAIResponsesServer({
    respond: (body: { max_output_tokens?: number }): ResponsesAction => {
      const a = answer(body, body.max_output_tokens ?? 0, false);
      if ('error' in a)
        return a.error === 429
          ? { error: { status: 429, message: 'Rate limit reached', type: 'requests', code: 'rate_limit_exceeded' } }
          : { error: { status: 500, message: 'The server had an error', type: 'server_error' } };
      return {
        text: 'done',
        usage: a.usage === null ? null : { input_tokens: a.usage.input, output_tokens: a.usage.output },
        model: a.model,
        ...(a.cutAfter === undefined ? {} : { dropAfterEvents: a.cutAfter === 'early' ? 1 : 4 }),
        ...(a.delayMs === undefined ? {} : { delayMs: a.delayMs }),
      };
    },
  });
}

function anthropicServer(answer: Answering): Promise<WireServer> {
  return startAnthropicMessagesServer({
    respond: (body: { max_tokens?: number }): MessagesAction => {
      const a = answer(body, body.max_tokens ?? 0, true);
      if ('error' in a)
        return a.error === 429
          ? { error: { status: 429, type: 'rate_limit_error', message: 'Rate limit reached' } }
          : { error: { status: 500, type: 'api_error', message: 'Internal server error' } };
      return {
        text: 'done',
        usage: { input_tokens: a.usage!.input, output_tokens: a.usage!.output },
        model: a.model,
        // Early: after message_start (the input's usage); late: well into the answer.
        ...(a.cutAfter === undefined ? {} : { dropAfterEvents: a.cutAfter === 'early' ? 1 : 5 }),
        ...(a.delayMs === undefined ? {} : { delayMs: a.delayMs }),
      };
    },
  });
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
 * Scripts whose every answer the client can read and price, where a report's billed must equal
 * `Billing.answeredUsd`: no `late` answer (the client would give up first), and no model the
 * prices lack (`dated`) or cannot price (`throws`), which a path that prices by the request's
 * model (a stream whose chunks name none) may still price. `notStreamed` leaves moves out of
 * the streamed scripts.
 */
export function onTimeScripts(maxLength: number, notStreamed: readonly Move[] = []): fc.Arbitrary<Script> {
  const priced = STREAM_MOVES.filter((m) => m !== 'late' && m !== 'dated' && m !== 'throws');
  const streamed = priced.filter((m) => !notStreamed.includes(m));
  return fc.oneof(
    fc.record({
      moves: fc.array(fc.constantFrom(...streamed), { minLength: 1, maxLength }),
      stream: fc.constant(true),
    }),
    fc.record({
      moves: fc.array(fc.constantFrom<Move>(...priced, 'overBound'), { minLength: 1, maxLength }),
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
  billing: Pick<Billing, 'overshotUsd' | 'overshoots'>,
  runs: readonly { error?: { message?: string } | undefined }[],
): number {
  if (billing.overshoots === 0) return 0;
  const read = runs.filter((r) => /past its bound/.test(r.error?.message ?? '')).length;
  return (billing.overshotUsd / billing.overshoots) * Math.max(0, billing.overshoots - read);
}
