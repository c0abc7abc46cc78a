/* eslint-disable @typescript-eslint/no-explicit-any -- request bodies are untyped JSON, checked field by field as the API does */
import { listenLocal, pause, type ReceivedRequest } from './http';

/**
 * A local server that speaks OpenAI's Chat Completions wire protocol (`POST /v1/chat/completions`,
 * JSON and SSE streaming) and rejects what the real API rejects: a missing key, a malformed
 * body, an assistant tool call left unanswered, a tool result for a call nobody made,
 * `stream_options` without `stream`. What it answers comes from `respond`, so examples and
 * tests script the "model".
 */

/** What the scripted model answers. */
export interface ChatReply {
  content?: string;
  toolCalls?: { id?: string; name: string; arguments: string }[];
  /** Default: counted from the request and the reply (4 characters a token). `null`: report none. */
  usage?: {
    prompt_tokens: number;
    completion_tokens: number;
    prompt_tokens_details?: Record<string, number>;
    completion_tokens_details?: Record<string, number>;
    cost?: number;
  } | null;
  model?: string;
  finishReason?: string;
  /** Wait this long before answering (the wait ends when the client goes away). */
  delayMs?: number;
  /** Streaming only: send this many chunks (all of them, when there are fewer), then cut the connection before `[DONE]`. */
  dropAfterChunks?: number;
  /**
   * Streaming only: awaited before chunk `index` is sent (the pace at which the model makes its
   * tokens); nothing more is sent once the client went away (`closed`).
   */
  beforeChunk?(index: number, closed: AbortSignal): Promise<void>;
}

/** An HTTP error, shaped as the real API sends it. */
export interface ChatErrorReply {
  error: { status: number; message: string; type?: string; code?: string | null; headers?: Record<string, string> };
}

export type ChatAction = ChatReply | ChatErrorReply;

/** A request the server accepted (and answered with `respond`) or rejected with a 400 / 401. */
export interface ChatExchange {
  body: any;
  stream: boolean;
  rejected?: { status: number; message: string };
}

export interface OpenAIChatServer {
  /** Pass as the client's `baseURL`: `http://127.0.0.1:<port>/v1`. */
  baseURL: string;
  /** Every request, in order. */
  readonly exchanges: ChatExchange[];
  /** The requests the server rejected as the real API would. */
  readonly rejected: ChatExchange[];
  close(): Promise<void>;
}

export interface OpenAIChatServerOptions {
  /**
   * The scripted model: called for each valid request with its body, its index among valid
   * requests, and its API key (the bearer token), which tells apart clients sharing the server.
   */
  respond(body: any, index: number, apiKey: string): ChatAction | Promise<ChatAction>;
  /** The model name reported when the reply names none. Default: the requested model. */
  model?: string;
  /**
   * The model's output limit: a larger `max_completion_tokens` (or `max_tokens`) is rejected, as
   * the API does. Default 128,000. A reply never reports more completion tokens than the
   * request's max: past it, it stops there (`finish_reason: 'length'`).
   */
  maxOutputTokens?: number;
  /**
   * Ignore the request's max output tokens, as some compatible servers do: each reply reports
   * (and bills) the completion tokens it is given, past the max or not. Default false.
   */
  ignoresMaxTokens?: boolean;
  /**
   * The model's context, in tokens (counted as 4 characters of the messages and tools a token):
   * a request over it gets the real API's 400 `context_length_exceeded`. Default: no limit.
   */
  contextTokens?: number;
}

const ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool']);

/** Checks a Chat Completions request body as the API does; returns the 400's message, or undefined. */
export function checkChatRequest(body: any, maxOutputTokens = 128_000): string | undefined {
  if (typeof body !== 'object' || body === null) return 'The request body must be a JSON object.';
  for (const key of ['max_completion_tokens', 'max_tokens']) {
    const max = body[key];
    if (max === undefined || max === null) continue;
    if (!Number.isInteger(max)) return `Invalid type for '${key}': expected an integer, but got ${typeof max} instead.`;
    if (max < 1) return `Invalid '${key}': integer below minimum value. Expected a value >= 1, but got ${max} instead.`;
    if (max > maxOutputTokens)
      return `max_tokens is too large: ${max}. This model supports at most ${maxOutputTokens} completion tokens, whereas you provided ${max}.`;
  }
  if (typeof body.model !== 'string' || body.model === '') return 'you must provide a model parameter';
  if (!Array.isArray(body.messages) || body.messages.length === 0)
    return "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.";
  if (body.stream_options != null && body.stream !== true)
    return "The 'stream_options' parameter is only allowed when 'stream' is enabled.";
  if (body.tools !== undefined) {
    if (!Array.isArray(body.tools)) return "Invalid type for 'tools': expected an array.";
    for (const [i, t] of body.tools.entries()) {
      if (t?.type !== 'function' || typeof t.function?.name !== 'string')
        return `Missing required parameter: 'tools[${i}].function'.`;
      if (
        t.function.parameters !== undefined &&
        (typeof t.function.parameters !== 'object' || t.function.parameters === null)
      )
        return `Invalid type for 'tools[${i}].function.parameters': expected an object.`;
    }
  }
  let open: string[] = []; // tool_call ids of the last assistant message not yet answered
  let answerable = new Set<string>();
  for (const [i, m] of body.messages.entries()) {
    if (typeof m !== 'object' || m === null || !ROLES.has(m.role))
      return `Invalid value: '${m?.role}'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.`;
    if (m.role === 'tool') {
      if (typeof m.tool_call_id !== 'string') return `Missing required parameter: 'messages[${i}].tool_call_id'.`;
      if (typeof m.content !== 'string' && !Array.isArray(m.content))
        return `Invalid type for 'messages[${i}].content': expected one of a string or array of objects.`;
      if (!answerable.has(m.tool_call_id))
        return "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.";
      answerable.delete(m.tool_call_id);
      open = open.filter((id) => id !== m.tool_call_id);
      continue;
    }
    if (open.length > 0) {
      return `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${open.join(', ')}`;
    }
    answerable = new Set();
    if (m.role === 'assistant') {
      if (m.content == null && !Array.isArray(m.tool_calls) && m.refusal == null)
        return `Invalid value for 'messages[${i}].content': expected a string, got null.`;
      if (m.tool_calls !== undefined) {
        if (!Array.isArray(m.tool_calls) || m.tool_calls.length === 0)
          return `Invalid 'messages[${i}].tool_calls': empty array. Expected an array with minimum length 1, but got an empty array instead.`;
        for (const [j, c] of m.tool_calls.entries()) {
          if (
            typeof c?.id !== 'string' ||
            c.type !== 'function' ||
            typeof c.function?.name !== 'string' ||
            typeof c.function?.arguments !== 'string'
          ) {
            return `Missing required parameter: 'messages[${i}].tool_calls[${j}]' (id, type 'function', function.name, function.arguments).`;
          }
          if (c.id === '')
            return `Invalid 'messages[${i}].tool_calls[${j}].id': empty string. Expected a string with minimum length 1, but got an empty string instead.`;
        }
        open = m.tool_calls.map((c: { id: string }) => c.id);
        const twice = open.find((id, k) => open.indexOf(id) !== k);
        if (twice !== undefined) return `Invalid 'messages[${i}].tool_calls': duplicate tool_call id '${twice}'.`;
        answerable = new Set(open);
      }
    } else if (typeof m.content !== 'string' && !Array.isArray(m.content)) {
      return `Invalid type for 'messages[${i}].content': expected one of a string or array of objects.`;
    }
  }
  if (open.length > 0) {
    return `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${open.join(', ')}`;
  }
  return undefined;
}

const tokens = (text: string): number => Math.max(1, Math.ceil(text.length / 4));

/** Starts the server on 127.0.0.1 and a free port. */
export async function startOpenAIChatServer(options: OpenAIChatServerOptions): Promise<OpenAIChatServer> {
  const exchanges: ChatExchange[] = [];
  let valid = 0;
  let callSeq = 0;
  const server = await listenLocal(async (req: ReceivedRequest, ex) => {
    const body = req.body;
    const exchange: ChatExchange = { body, stream: body?.stream === true };
    exchanges.push(exchange);
    const reject = (
      status: number,
      message: string,
      type = 'invalid_request_error',
      code: string | null = null,
    ): void => {
      exchange.rejected = { status, message };
      ex.json(status, { error: { message, type, param: null, code } });
    };
    if (req.path !== '/v1/chat/completions') return reject(404, `Invalid URL (POST ${req.path})`);
    if (!/^Bearer \S+/.test(String(req.headers.authorization ?? ''))) {
      return reject(
        401,
        "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
        'invalid_request_error',
        'missing_api_key',
      );
    }
    const problem = checkChatRequest(body, options.maxOutputTokens);
    if (problem !== undefined) return reject(400, problem);
    const promptTokens = tokens(JSON.stringify(body.messages) + JSON.stringify(body.tools ?? []));
    if (options.contextTokens !== undefined && promptTokens > options.contextTokens) {
      // The real API's body for it, `param` included.
      const message = `This model's maximum context length is ${options.contextTokens} tokens. However, your messages resulted in ${promptTokens} tokens. Please reduce the length of the messages.`;
      exchange.rejected = { status: 400, message };
      ex.json(400, {
        error: { message, type: 'invalid_request_error', param: 'messages', code: 'context_length_exceeded' },
      });
      return;
    }

    const action = await options.respond(body, valid++, String(req.headers.authorization).slice('Bearer '.length));
    if ('error' in action) {
      const e = action.error;
      ex.json(
        e.status,
        { error: { message: e.message, type: e.type ?? 'server_error', param: null, code: e.code ?? null } },
        e.headers,
      );
      return;
    }
    await pause(action.delayMs ?? 0, ex.closed);
    if (ex.closed.aborted) return;
    const model = action.model ?? options.model ?? body.model;
    const calls = (action.toolCalls ?? []).map((c) => ({
      id: c.id ?? `call_${(++callSeq).toString().padStart(6, '0')}`,
      type: 'function' as const,
      function: { name: c.name, arguments: c.arguments },
    }));
    const requestedMax: number | undefined = body.max_completion_tokens ?? body.max_tokens ?? undefined;
    const cut =
      options.ignoresMaxTokens !== true &&
      requestedMax !== undefined &&
      (action.usage?.completion_tokens ?? 0) > requestedMax;
    const finish = cut ? 'length' : (action.finishReason ?? (calls.length > 0 ? 'tool_calls' : 'stop'));
    const usage =
      action.usage === null
        ? undefined
        : (() => {
            const u = action.usage ?? {
              prompt_tokens: tokens(JSON.stringify(body.messages)),
              completion_tokens: tokens((action.content ?? '') + JSON.stringify(calls)),
            };
            // The model stops at the request's max: it never reports more.
            const max: number | undefined = body.max_completion_tokens ?? body.max_tokens ?? undefined;
            const completion =
              options.ignoresMaxTokens !== true && max !== undefined && u.completion_tokens > max
                ? max
                : u.completion_tokens;
            return { ...u, completion_tokens: completion, total_tokens: u.prompt_tokens + completion };
          })();
    const id = `chatcmpl-local${valid}`;
    const created = Math.floor(Date.now() / 1000);
    if (!exchange.stream) {
      const message = {
        role: 'assistant',
        content: action.content ?? null,
        refusal: null,
        ...(calls.length > 0 ? { tool_calls: calls } : {}),
      };
      ex.json(200, {
        id,
        object: 'chat.completion',
        created,
        model,
        choices: [{ index: 0, message, logprobs: null, finish_reason: finish }],
        ...(usage ? { usage } : {}),
      });
      return;
    }
    // Streaming: role first, then the text in pieces, then each tool call (id and name, then its
    // arguments in pieces), the finish reason, and the usage chunk when include_usage asked for it.
    const sse = ex.sse();
    const chunks: unknown[] = [];
    const chunk = (delta: unknown, finish_reason: string | null = null): unknown => ({
      id,
      object: 'chat.completion.chunk',
      created,
      model,
      choices: [{ index: 0, delta, logprobs: null, finish_reason }],
    });
    chunks.push(chunk({ role: 'assistant', content: '' }));
    for (const piece of (action.content ?? '').match(/[\s\S]{1,8}/g) ?? []) chunks.push(chunk({ content: piece }));
    calls.forEach((c, index) => {
      chunks.push(
        chunk({
          tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.function.name, arguments: '' } }],
        }),
      );
      for (const piece of c.function.arguments.match(/[\s\S]{1,8}/g) ?? [])
        chunks.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
    });
    chunks.push(chunk({}, finish));
    if (body.stream_options?.include_usage === true && usage)
      chunks.push({ id, object: 'chat.completion.chunk', created, model, choices: [], usage });
    for (const [i, c] of chunks.entries()) {
      if (action.dropAfterChunks !== undefined && i >= action.dropAfterChunks) return sse.drop();
      if (action.beforeChunk !== undefined) await action.beforeChunk(i, ex.closed);
      if (ex.closed.aborted) return;
      sse.write(JSON.stringify(c));
    }
    // Every chunk sent (the usage chunk too), then cut before [DONE]: the reply was whole, its end never came.
    if (action.dropAfterChunks !== undefined) return sse.drop();
    sse.write('[DONE]');
    sse.end();
  });
  return {
    baseURL: `${server.origin}/v1`,
    exchanges,
    get rejected() {
      return exchanges.filter((e) => e.rejected !== undefined);
    },
    close: () => server.close(),
  };
}
