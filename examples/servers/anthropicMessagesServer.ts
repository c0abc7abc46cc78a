/* eslint-disable @typescript-eslint/no-explicit-any -- request bodies are untyped JSON, checked field by field as the API does */
import { listenLocal, pause, type ReceivedRequest } from './http';

/**
 * A local server that speaks Anthropic's Messages wire protocol (`POST /v1/messages`, JSON and
 * SSE streaming) and rejects what the real API rejects: a missing key or version header, no
 * `max_tokens`, a `system` role in `messages`, `tool_use` blocks without `tool_result` blocks
 * right after, a `tool_result` for a `tool_use` that is not in the previous message, empty
 * content. What it answers comes from `respond`, so examples and tests script the "model".
 */

/** What the scripted model answers. */
export interface MessagesReply {
  text?: string;
  toolUses?: {
    id?: string;
    name: string;
    input: unknown;
    /** Streaming only: send this as the input's JSON instead. */ rawJson?: string;
  }[];
  /** Default: counted from the request and the reply (4 characters a token). `null` is not allowed: the API always reports usage. */
  usage?: {
    input_tokens: number;
    output_tokens: number;
    cache_creation_input_tokens?: number;
    cache_read_input_tokens?: number;
    output_tokens_details?: { thinking_tokens: number };
  };
  model?: string;
  stopReason?: string;
  delayMs?: number;
  /** Streaming only: send this many events, then cut the connection. */
  dropAfterEvents?: number;
  /** Streaming only: send this many events, then an `error` event (an overload mid-stream, as the API does). */
  errorAfterEvents?: number;
  /**
   * Streaming only: awaited before event `index` is sent (the pace at which the model makes its
   * tokens); nothing more is sent once the client went away (`closed`).
   */
  beforeEvent?(index: number, closed: AbortSignal): Promise<void>;
}

/** An HTTP error, shaped as the real API sends it (e.g. status 529, type `overloaded_error`). */
export interface MessagesErrorReply {
  error: { status: number; type: string; message: string; headers?: Record<string, string> };
}

export type MessagesAction = MessagesReply | MessagesErrorReply;

export interface MessagesExchange {
  body: any;
  headers: Record<string, string | string[] | undefined>;
  stream: boolean;
  rejected?: { status: number; message: string };
}

export interface AnthropicMessagesServer {
  /** Pass as the client's `baseURL`: `http://127.0.0.1:<port>`. */
  baseURL: string;
  readonly exchanges: MessagesExchange[];
  readonly rejected: MessagesExchange[];
  close(): Promise<void>;
}

export interface AnthropicMessagesServerOptions {
  /** The scripted model: called for each valid request with its body and its index among valid requests. */
  respond(body: any, index: number): MessagesAction | Promise<MessagesAction>;
  /**
   * The model's output limit: a larger `max_tokens` is rejected, as the API does. Default 64,000.
   * A reply never reports more output tokens than the request's `max_tokens`: past it, it stops
   * there (`stop_reason: 'max_tokens'`).
   */
  maxOutputTokens?: number;
  /**
   * The model's context, in tokens (4 characters of messages, system and tools a token): a
   * request over it gets the real API's 400 `prompt is too long`. Default: no limit.
   */
  contextTokens?: number;
}

const blocksOf = (content: unknown): any[] =>
  typeof content === 'string' ? [{ type: 'text', text: content }] : Array.isArray(content) ? content : [];

/** Checks a Messages request body as the API does; returns the 400's message, or undefined. */
export function checkMessagesRequest(body: any, maxOutputTokens = 64_000): string | undefined {
  if (typeof body !== 'object' || body === null) return 'Request body must be a JSON object';
  if (typeof body.model !== 'string' || body.model === '') return 'model: Field required';
  if (!Number.isInteger(body.max_tokens) || body.max_tokens < 1) return 'max_tokens: Field required';
  if (body.max_tokens > maxOutputTokens)
    return `max_tokens: ${body.max_tokens} > ${maxOutputTokens}, which is the maximum allowed number of output tokens for ${body.model}`;
  if (!Array.isArray(body.messages)) return 'messages: Field required';
  if (body.system !== undefined && typeof body.system !== 'string' && !Array.isArray(body.system))
    return 'system: Input should be a valid string or list';
  for (const [i, t] of (body.tools ?? []).entries()) {
    if (typeof t?.name !== 'string' || typeof t.input_schema !== 'object' || t.input_schema === null)
      return `tools.${i}.input_schema: Field required`;
  }
  // The API combines consecutive turns of the same role into one.
  const turns: { role: string; blocks: any[]; at: number }[] = [];
  for (const [i, m] of body.messages.entries()) {
    if (m?.role !== 'user' && m?.role !== 'assistant') {
      return m?.role === 'system'
        ? 'messages: Unexpected role "system". The Messages API accepts a top-level `system` parameter, not "system" as an input message role.'
        : `messages.${i}.role: Input should be 'user' or 'assistant'`;
    }
    if (typeof m.content !== 'string' && !Array.isArray(m.content))
      return `messages.${i}.content: Input should be a valid list`;
    const last = i === body.messages.length - 1;
    if (blocksOf(m.content).length === 0 && !(last && m.role === 'assistant')) {
      return `messages.${i}: all messages must have non-empty content except for the optional final assistant message`;
    }
    for (const [j, b] of blocksOf(m.content).entries()) {
      if (b?.type === 'text' && (typeof b.text !== 'string' || (b.text === '' && !(last && m.role === 'assistant'))))
        return 'messages: text content blocks must be non-empty';
      if (
        b?.type === 'tool_use' &&
        (typeof b.id !== 'string' ||
          typeof b.name !== 'string' ||
          typeof b.input !== 'object' ||
          b.input === null ||
          Array.isArray(b.input))
      ) {
        return `messages.${i}.content.${j}.tool_use.input: Input should be a valid dictionary`;
      }
      if (b?.type === 'tool_result' && m.role !== 'user')
        return `messages.${i}.content.${j}: tool_result blocks can only be in user messages`;
    }
    const prev = turns.at(-1);
    if (prev !== undefined && prev.role === m.role) prev.blocks.push(...blocksOf(m.content));
    else turns.push({ role: m.role, blocks: [...blocksOf(m.content)], at: i });
  }
  if (turns[0] !== undefined && turns[0].role !== 'user') return 'messages: first message must use the "user" role';
  for (const [k, turn] of turns.entries()) {
    const uses =
      turn.role === 'assistant' ? turn.blocks.filter((b) => b?.type === 'tool_use').map((b) => b.id as string) : [];
    const badId = uses.find((id) => !/^[a-zA-Z0-9_-]+$/.test(id));
    if (badId !== undefined)
      return `messages.${turn.at}: \`tool_use.id\`: String should match pattern '^[a-zA-Z0-9_-]+$' (got ${JSON.stringify(badId)})`;
    if (new Set(uses).size !== uses.length) return `messages.${turn.at}: \`tool_use\` ids must be unique`;
    if (turn.role === 'user') {
      const prev = turns[k - 1];
      const asked = new Set(prev?.blocks.filter((b) => b?.type === 'tool_use').map((b) => b.id as string) ?? []);
      let seenOther = false;
      for (const [j, b] of turn.blocks.entries()) {
        if (b?.type !== 'tool_result') {
          seenOther = true;
          continue;
        }
        if (!asked.has(b.tool_use_id)) {
          return `messages.${turn.at}.content.${j}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${b.tool_use_id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
        }
        if (seenOther)
          return `messages.${turn.at}: \`tool_result\` blocks must come first in the content, before any other block`;
      }
    }
    if (uses.length > 0) {
      const next = turns[k + 1];
      const answered = new Set(
        next?.blocks.filter((b) => b?.type === 'tool_result').map((b) => b.tool_use_id as string) ?? [],
      );
      const missing = uses.filter((id) => !answered.has(id));
      if (next !== undefined && missing.length > 0) {
        return `messages.${turn.at}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
      }
      if (next === undefined) {
        return `messages.${turn.at}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${uses.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
      }
    }
  }
  if (turns.length === 0) return 'messages: at least one message is required';
  return undefined;
}

const tokens = (text: string): number => Math.max(1, Math.ceil(text.length / 4));

/** Starts the server on 127.0.0.1 and a free port. */
export async function startAnthropicMessagesServer(
  options: AnthropicMessagesServerOptions,
): Promise<AnthropicMessagesServer> {
  const exchanges: MessagesExchange[] = [];
  let valid = 0;
  let seq = 0;
  const server = await listenLocal(async (req: ReceivedRequest, ex) => {
    const body = req.body;
    const exchange: MessagesExchange = { body, headers: req.headers, stream: body?.stream === true };
    exchanges.push(exchange);
    const requestId = `req_local${exchanges.length}`;
    const fail = (status: number, type: string, message: string, headers: Record<string, string> = {}): void => {
      ex.json(
        status,
        { type: 'error', error: { type, message }, request_id: requestId },
        { 'request-id': requestId, ...headers },
      );
    };
    const reject = (status: number, type: string, message: string): void => {
      exchange.rejected = { status, message };
      fail(status, type, message);
    };
    if (req.path !== '/v1/messages') return reject(404, 'not_found_error', `Not found: ${req.path}`);
    // Older SDKs send the key as `x-api-key`, newer ones as `Authorization: Bearer`; the API takes either.
    if (!req.headers['x-api-key'] && !/^Bearer \S+/.test(String(req.headers.authorization ?? '')))
      return reject(401, 'authentication_error', 'x-api-key header is required');
    if (typeof req.headers['anthropic-version'] !== 'string')
      return reject(400, 'invalid_request_error', 'anthropic-version: header is required');
    const problem = checkMessagesRequest(body, options.maxOutputTokens);
    if (problem !== undefined) return reject(400, 'invalid_request_error', problem);
    const promptTokens = tokens(JSON.stringify(body.messages) + (body.system ?? '') + JSON.stringify(body.tools ?? []));
    if (options.contextTokens !== undefined && promptTokens > options.contextTokens)
      // The real API's wording: `prompt is too long: <n> tokens > <max> maximum`.
      return reject(
        400,
        'invalid_request_error',
        `prompt is too long: ${promptTokens} tokens > ${options.contextTokens} maximum`,
      );

    const action = await options.respond(body, valid++);
    if ('error' in action)
      return fail(action.error.status, action.error.type, action.error.message, action.error.headers);
    await pause(action.delayMs ?? 0, ex.closed);
    if (ex.closed.aborted) return;
    const content = [
      ...(action.text !== undefined ? [{ type: 'text', text: action.text, citations: null }] : []),
      ...(action.toolUses ?? []).map((t) => ({
        type: 'tool_use',
        id: t.id ?? `toolu_local${(++seq).toString().padStart(6, '0')}`,
        name: t.name,
        input: t.input,
        rawJson: t.rawJson,
      })),
    ];
    const usage = {
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      ...(action.usage ?? {
        input_tokens: tokens(JSON.stringify(body.messages) + (body.system ?? '')),
        output_tokens: tokens(JSON.stringify(content)),
      }),
    };
    // The model stops at max_tokens: it never reports more.
    const cut = usage.output_tokens > body.max_tokens;
    if (cut) usage.output_tokens = body.max_tokens;
    const message = {
      id: `msg_local${valid}`,
      type: 'message',
      role: 'assistant',
      model: action.model ?? body.model,
      content: content.map(({ rawJson: _raw, ...b }: any) => b),
      stop_reason: cut ? 'max_tokens' : (action.stopReason ?? (action.toolUses?.length ? 'tool_use' : 'end_turn')),
      stop_sequence: null,
      usage,
    };
    if (!exchange.stream) return ex.json(200, message, { 'request-id': requestId });

    // Streaming: message_start (input usage), a ping, each block (start, deltas, stop),
    // message_delta (stop reason, output usage), message_stop.
    const events: [string, unknown][] = [];
    events.push([
      'message_start',
      {
        type: 'message_start',
        message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } },
      },
    ]);
    events.push(['ping', { type: 'ping' }]);
    content.forEach((b: any, index) => {
      if (b.type === 'text') {
        events.push([
          'content_block_start',
          { type: 'content_block_start', index, content_block: { type: 'text', text: '', citations: null } },
        ]);
        for (const piece of (b.text as string).match(/[\s\S]{1,8}/g) ?? [])
          events.push([
            'content_block_delta',
            { type: 'content_block_delta', index, delta: { type: 'text_delta', text: piece } },
          ]);
      } else {
        events.push([
          'content_block_start',
          {
            type: 'content_block_start',
            index,
            content_block: { type: 'tool_use', id: b.id, name: b.name, input: {} },
          },
        ]);
        const json: string = b.rawJson ?? JSON.stringify(b.input);
        for (const piece of json.match(/[\s\S]{1,8}/g) ?? [])
          events.push([
            'content_block_delta',
            { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: piece } },
          ]);
      }
      events.push(['content_block_stop', { type: 'content_block_stop', index }]);
    });
    events.push([
      'message_delta',
      {
        type: 'message_delta',
        delta: { stop_reason: message.stop_reason, stop_sequence: null },
        usage: { output_tokens: usage.output_tokens },
      },
    ]);
    events.push(['message_stop', { type: 'message_stop' }]);
    const sse = ex.sse();
    for (const [i, [name, data]] of events.entries()) {
      if (action.dropAfterEvents !== undefined && i >= action.dropAfterEvents) return sse.drop();
      if (action.errorAfterEvents !== undefined && i >= action.errorAfterEvents) {
        sse.write(
          JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }),
          'error',
        );
        return sse.end();
      }
      if (action.beforeEvent !== undefined) await action.beforeEvent(i, ex.closed);
      if (ex.closed.aborted) return;
      sse.write(JSON.stringify(data), name);
    }
    sse.end();
  });
  return {
    baseURL: server.origin,
    exchanges,
    get rejected() {
      return exchanges.filter((e) => e.rejected !== undefined);
    },
    close: () => server.close(),
  };
}
