/* eslint-disable @typescript-eslint/no-explicit-any -- request bodies are untyped JSON, checked field by field as the API does */
import { listenLocal, pause, type ReceivedRequest } from './http';

/**
 * A local server that speaks OpenAI's Responses wire protocol (`POST /v1/responses`, JSON and
 * SSE with the API's event names and shapes) and rejects what the real API rejects: a missing
 * key, a missing `model` or `input`, a role or content part the API does not take, a
 * `function_call` with no `function_call_output` for its `call_id`, an output for a call
 * nobody made, a reasoning item the server cannot find (not stored, or `store: false` without
 * encrypted content), encrypted content it did not issue, a reasoning item without the item
 * that followed it, `include: ['reasoning.encrypted_content']` for a model that does not
 * reason, a function tool in the Chat Completions shape, `max_output_tokens` below 16, and a
 * strict tool whose schema strict mode cannot take. What it answers comes from `respond`, so
 * examples and tests script the "model".
 *
 * It models the state the API keeps: the ids of the items of every response stored (`store`
 * not false, the API's default) and the encrypted reasoning it handed out.
 */

/** What the scripted model answers. */
export interface ResponsesReply {
  /** The assistant message's text. */
  text?: string;
  /** A refusal instead of (or beside) the text. */
  refusal?: string;
  toolCalls?: { callId?: string; name: string; arguments: string }[];
  /**
   * Web searches the server ran (their queries), as `web_search_call` items before the message;
   * only for a request that offers a `web_search` tool, and no more than its `max_tool_calls`
   * (the API ignores further calls).
   */
  webSearches?: string[];
  /** A reasoning item first, with these summary texts; its encrypted content is sent when `include` asks for it. */
  reasoning?: { summary?: string[] };
  /** Leave the encrypted content out even when `include` asks for it (a server that ignores `include`). */
  withholdEncryptedContent?: boolean;
  /** Default: counted from the request and the reply (4 characters a token). `null`: report none. */
  usage?: {
    input_tokens: number;
    output_tokens: number;
    input_tokens_details?: Record<string, number>;
    output_tokens_details?: Record<string, number>;
    cost?: number;
  } | null;
  model?: string;
  /** End `incomplete` for this reason, with what was produced so far. */
  incomplete?: 'max_output_tokens' | 'content_filter';
  /** Wait this long before answering (the wait ends when the client goes away). */
  delayMs?: number;
  /** Streaming only: send this many events, then cut the connection. */
  dropAfterEvents?: number;
  /** Streaming only: send this many events, then end the stream normally, without `response.completed`. */
  endAfterEvents?: number;
  /** Streaming only: send this many events, then send nothing more until the client goes away. */
  stallAfterEvents?: number;
  /**
   * Streaming only: awaited before event `index` is sent (the pace at which the model makes its
   * tokens); nothing more is sent once the client went away (`closed`).
   */
  beforeEvent?(index: number, closed: AbortSignal): Promise<void>;
  /**
   * Fail the response. Streaming: after `afterEvents` events (default 2: `response.created`
   * and `response.in_progress`), an `error` event with its fields under `error` (as the API
   * sends it), with its fields on the event (`error-documented`, as the API reference shows
   * it), or `response.failed`; then the stream ends. Not streaming: a 200 whose status is `failed`.
   */
  fail?: { code: string; message: string; as?: 'error' | 'error-documented' | 'response.failed'; afterEvents?: number };
}

/** An HTTP error, shaped as the real API sends it. */
export interface ResponsesErrorReply {
  error: {
    status: number;
    message: string;
    type?: string;
    code?: string | null;
    param?: string | null;
    headers?: Record<string, string>;
  };
}

export type ResponsesAction = ResponsesReply | ResponsesErrorReply;

/** A request the server accepted (and answered with `respond`) or rejected with a 400 / 401 / 404. */
export interface ResponsesExchange {
  body: any;
  stream: boolean;
  rejected?: { status: number; message: string };
}

export interface OpenAIResponsesServer {
  /** Pass as the client's `baseURL`: `http://127.0.0.1:<port>/v1`. */
  baseURL: string;
  /** Every request, in order. */
  readonly exchanges: ResponsesExchange[];
  /** The requests the server rejected as the real API would. */
  readonly rejected: ResponsesExchange[];
  close(): Promise<void>;
}

export interface OpenAIResponsesServerOptions {
  /**
   * The scripted model: called for each valid request with its body, its index among valid
   * requests, and its API key (the bearer token), which tells apart clients sharing the server.
   */
  respond(body: any, index: number, apiKey: string): ResponsesAction | Promise<ResponsesAction>;
  /** The model name reported when the reply names none. Default: the requested model. */
  model?: string;
  /** Whether a model reasons (and so takes `include: ['reasoning.encrypted_content']`). Default: o-series, gpt-5 (not -chat) and codex models. */
  reasons?: (model: string) => boolean;
  /** The model's output limit: a larger `max_output_tokens` is rejected, as the API does. Default 128,000. */
  maxOutputTokens?: number;
}

/** What the server remembers between requests, as the API does. */
export interface ResponsesMemory {
  /** Ids of the items of stored responses. */
  stored: Set<string>;
  /** Encrypted reasoning the server handed out. */
  encrypted: Set<string>;
  reasons: (model: string) => boolean;
}

const reasoningModel = (model: string): boolean => /^(o\d|gpt-5(?!-chat)|codex)/.test(model);

const ROLES = new Set(['user', 'assistant', 'system', 'developer']);
const INPUT_PARTS = new Set(['input_text', 'input_image', 'input_file']);
const OUTPUT_PARTS = new Set(['output_text', 'refusal']);
const INCLUDABLE = new Set([
  'file_search_call.results',
  'web_search_call.results',
  'web_search_call.action.sources',
  'message.input_image.image_url',
  'computer_call_output.output.image_url',
  'code_interpreter_call.outputs',
  'reasoning.encrypted_content',
  'message.output_text.logprobs',
]);
const ID_PREFIX: Record<string, string> = { message: 'msg', function_call: 'fc', reasoning: 'rs' };

const typeName = (value: unknown): string => (value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value);

/** The problems strict mode finds in a function's schema (the first one), or undefined. */
function strictSchemaProblem(schema: any, context: string[] = []): string | undefined {
  if (typeof schema !== 'object' || schema === null) return undefined;
  const where = `In context=(${context.map((c) => `'${c}'`).join(', ')})`;
  if (schema.type === 'object' || schema.properties !== undefined) {
    if (schema.additionalProperties !== false)
      return `${where}, 'additionalProperties' is required to be supplied and to be false.`;
    const keys = Object.keys(schema.properties ?? {});
    const required: unknown[] = Array.isArray(schema.required) ? schema.required : [];
    const missing = keys.find((k) => !required.includes(k));
    if (missing !== undefined)
      return `${where}, 'required' is required to be supplied and to be an array including every key in properties. Missing '${missing}'.`;
    for (const k of keys) {
      const inner = strictSchemaProblem(schema.properties[k], [...context, 'properties', k]);
      if (inner !== undefined) return inner;
    }
  }
  if (schema.items !== undefined) return strictSchemaProblem(schema.items, [...context, 'items']);
  return undefined;
}

/**
 * Checks a Responses request body as the API does, against what the server remembers; returns
 * the 400's message, or undefined. Where the API's wording is known it is used; messages for
 * item types this server does not model say so.
 */
export function checkResponsesRequest(
  body: any,
  memory: ResponsesMemory = { stored: new Set(), encrypted: new Set(), reasons: reasoningModel },
  maxOutputTokens = 128_000,
): string | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    return 'The request body must be a JSON object.';
  if (typeof body.model !== 'string' || body.model === '') return "Missing required parameter: 'model'.";
  if (body.input === undefined || body.input === null) return "Missing required parameter: 'input'.";
  if (typeof body.input !== 'string' && !Array.isArray(body.input))
    return `Invalid type for 'input': expected one of a string or an array of input items, but got ${typeName(body.input)} instead.`;
  if (body.store != null && typeof body.store !== 'boolean')
    return `Invalid type for 'store': expected a boolean, but got ${typeName(body.store)} instead.`;
  if (body.instructions != null && typeof body.instructions !== 'string')
    return `Invalid type for 'instructions': expected a string, but got ${typeName(body.instructions)} instead.`;
  if (body.max_output_tokens != null) {
    if (!Number.isInteger(body.max_output_tokens))
      return `Invalid type for 'max_output_tokens': expected an integer, but got ${typeName(body.max_output_tokens)} instead.`;
    if (body.max_output_tokens < 16)
      return `Invalid 'max_output_tokens': integer below minimum value. Expected a value >= 16, but got ${body.max_output_tokens} instead.`;
    if (body.max_output_tokens > maxOutputTokens)
      return `max_output_tokens is too large: ${body.max_output_tokens}. This model supports at most ${maxOutputTokens} output tokens, whereas you provided ${body.max_output_tokens}.`;
  }
  if (body.include != null) {
    if (!Array.isArray(body.include))
      return `Invalid type for 'include': expected an array, but got ${typeName(body.include)} instead.`;
    for (const value of body.include) {
      if (!INCLUDABLE.has(value))
        return `Invalid value: '${String(value)}'. Supported values are: ${[...INCLUDABLE].map((v) => `'${v}'`).join(', ')}.`;
    }
    if (body.include.includes('reasoning.encrypted_content') && !memory.reasons(body.model))
      return 'Encrypted content is not supported with this model.';
  }
  if (
    body.max_tool_calls != null &&
    !(typeof body.max_tool_calls === 'number' && Number.isInteger(body.max_tool_calls) && body.max_tool_calls >= 0)
  )
    return `Invalid 'max_tool_calls': expected a non-negative integer, but got ${typeName(body.max_tool_calls)} instead.`;
  if (body.tools != null) {
    if (!Array.isArray(body.tools))
      return `Invalid type for 'tools': expected an array, but got ${typeName(body.tools)} instead.`;
    for (const [i, t] of body.tools.entries()) {
      if (typeof t?.type !== 'string') return `Missing required parameter: 'tools[${i}].type'.`;
      if (t.type !== 'function') continue;
      if (typeof t.name !== 'string') return `Missing required parameter: 'tools[${i}].name'.`;
      if (t.parameters != null && (typeof t.parameters !== 'object' || Array.isArray(t.parameters)))
        return `Invalid type for 'tools[${i}].parameters': expected an object, but got ${typeName(t.parameters)} instead.`;
      if (t.strict === true) {
        const problem = strictSchemaProblem(t.parameters ?? {});
        if (problem !== undefined) return `Invalid schema for function '${t.name}': ${problem}`;
      }
    }
  }
  if (typeof body.input === 'string') return undefined;
  return checkInputItems(body.input, body.store === false, memory);
}

function checkInputItems(input: any[], storeFalse: boolean, memory: ResponsesMemory): string | undefined {
  const calls = new Set<string>(); // call_ids of function calls so far
  const open: string[] = []; // call_ids still without an output
  for (const [i, item] of input.entries()) {
    if (typeof item !== 'object' || item === null || Array.isArray(item))
      return `Invalid type for 'input[${i}]': expected an object, but got ${typeName(item)} instead.`;
    const type = item.type ?? (item.role !== undefined ? 'message' : undefined);
    if (typeof type !== 'string') return `Missing required parameter: 'input[${i}].type'.`;
    const prefix = ID_PREFIX[type];
    if (prefix !== undefined && item.id != null && (typeof item.id !== 'string' || !item.id.startsWith(prefix))) {
      return `Invalid 'input[${i}].id': '${String(item.id)}'. Expected an ID that begins with '${prefix}'.`;
    }
    switch (type) {
      case 'message': {
        if (!ROLES.has(item.role))
          return `Invalid value: '${String(item.role)}'. Supported values are: 'assistant', 'system', 'developer', and 'user'.`;
        if (typeof item.content === 'string') break;
        if (!Array.isArray(item.content))
          return `Invalid type for 'input[${i}].content': expected one of a string or an array of content parts, but got ${typeName(item.content)} instead.`;
        const allowed = item.role === 'assistant' ? OUTPUT_PARTS : INPUT_PARTS;
        for (const part of item.content) {
          if (!allowed.has(part?.type)) {
            return `Invalid value: '${String(part?.type)}'. Supported values are: ${item.role === 'assistant' ? "'output_text' and 'refusal'" : "'input_text', 'input_image', and 'input_file'"}.`;
          }
        }
        break;
      }
      case 'function_call': {
        for (const field of ['call_id', 'name', 'arguments']) {
          if (typeof item[field] !== 'string') return `Missing required parameter: 'input[${i}].${field}'.`;
        }
        if (item.call_id === '')
          return `Invalid 'input[${i}].call_id': empty string. Expected a string with minimum length 1, but got an empty string instead.`;
        if (calls.has(item.call_id))
          return `Duplicate value for 'input[${i}].call_id': a function call with call_id ${item.call_id} is already in the input.`;
        calls.add(item.call_id);
        open.push(item.call_id);
        break;
      }
      case 'function_call_output': {
        if (typeof item.call_id !== 'string') return `Missing required parameter: 'input[${i}].call_id'.`;
        if (typeof item.output !== 'string' && !Array.isArray(item.output))
          return `Missing required parameter: 'input[${i}].output'.`;
        if (!calls.has(item.call_id))
          return `No tool call found for function call output with call_id ${item.call_id}.`;
        const at = open.indexOf(item.call_id);
        if (at !== -1) open.splice(at, 1);
        break;
      }
      case 'reasoning': {
        if (!Array.isArray(item.summary)) return `Missing required parameter: 'input[${i}].summary'.`;
        const name = typeof item.id === 'string' ? item.id : `input[${i}]`;
        if (typeof item.encrypted_content === 'string') {
          if (!memory.encrypted.has(item.encrypted_content))
            return `The encrypted content for item ${name} could not be verified.`;
        } else if (typeof item.id !== 'string' || !memory.stored.has(item.id)) {
          return `Item with id '${String(item.id)}' not found.${storeFalse ? ' Items are not persisted when `store` is set to false. Try again with `store` set to true, or remove this item from your input.' : ''}`;
        }
        const next = input.slice(i + 1).find((n: any) => n?.type !== 'reasoning');
        const follows =
          next !== undefined &&
          (next.type === 'function_call' || ((next.type ?? 'message') === 'message' && next.role === 'assistant'));
        if (!follows) return `Item '${name}' of type 'reasoning' was provided without its required following item.`;
        break;
      }
      default:
        return `Invalid value: '${type}'. This local server takes the input item types 'message', 'function_call', 'function_call_output' and 'reasoning'.`;
    }
  }
  if (open.length > 0) return `No tool output found for function call ${open[0]}.`;
  return undefined;
}

const tokens = (text: string): number => Math.max(1, Math.ceil(text.length / 4));
const pieces = (text: string): string[] => text.match(/[\s\S]{1,8}/g) ?? [];

/** Starts the server on 127.0.0.1 and a free port. */
export async function startOpenAIResponsesServer(
  options: OpenAIResponsesServerOptions,
): Promise<OpenAIResponsesServer> {
  const exchanges: ResponsesExchange[] = [];
  const memory: ResponsesMemory = {
    stored: new Set(),
    encrypted: new Set(),
    reasons: options.reasons ?? reasoningModel,
  };
  let valid = 0;
  let seq = 0;
  const next = (prefix: string): string => `${prefix}_local${(++seq).toString().padStart(6, '0')}`;

  const server = await listenLocal(async (req: ReceivedRequest, ex) => {
    const body = req.body;
    const exchange: ResponsesExchange = { body, stream: body?.stream === true };
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
    if (req.path !== '/v1/responses') return reject(404, `Invalid URL (POST ${req.path})`);
    if (!/^Bearer \S+/.test(String(req.headers.authorization ?? ''))) {
      return reject(
        401,
        "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
        'invalid_request_error',
        'missing_api_key',
      );
    }
    const problem = checkResponsesRequest(body, memory, options.maxOutputTokens);
    if (problem !== undefined) return reject(400, problem);

    const action = await options.respond(body, valid++, String(req.headers.authorization).slice('Bearer '.length));
    if ('error' in action) {
      const e = action.error;
      ex.json(
        e.status,
        { error: { message: e.message, type: e.type ?? 'server_error', param: e.param ?? null, code: e.code ?? null } },
        e.headers,
      );
      return;
    }
    await pause(action.delayMs ?? 0, ex.closed);
    if (ex.closed.aborted) return;

    // The response: a reasoning item, the web searches, the message, the function calls — in that order.
    const model = action.model ?? options.model ?? body.model;
    const store = body.store !== false;
    const wantsEncrypted =
      Array.isArray(body.include) &&
      body.include.includes('reasoning.encrypted_content') &&
      action.withholdEncryptedContent !== true;
    const done = action.incomplete === undefined ? 'completed' : 'incomplete';
    const output: any[] = [];
    if (action.reasoning !== undefined) {
      const id = next('rs');
      const item: any = {
        id,
        type: 'reasoning',
        summary: (action.reasoning.summary ?? []).map((text) => ({ type: 'summary_text', text })),
      };
      if (wantsEncrypted) {
        item.encrypted_content = `gAAAA-local-${Buffer.from(`${id}:${body.model}`).toString('base64')}`;
        memory.encrypted.add(item.encrypted_content);
      }
      output.push(item);
    }
    const offersSearch =
      Array.isArray(body.tools) && body.tools.some((t: any) => String(t?.type).startsWith('web_search'));
    const searches = offersSearch ? (action.webSearches ?? []).slice(0, body.max_tool_calls ?? undefined) : [];
    for (const query of searches)
      output.push({ id: next('ws'), type: 'web_search_call', status: 'completed', action: { type: 'search', query } });
    if (action.text !== undefined || action.refusal !== undefined) {
      const content: any[] = [];
      if (action.text !== undefined)
        content.push({ type: 'output_text', annotations: [], logprobs: [], text: action.text });
      if (action.refusal !== undefined) content.push({ type: 'refusal', refusal: action.refusal });
      output.push({ id: next('msg'), type: 'message', status: done, content, role: 'assistant' });
    }
    for (const c of action.toolCalls ?? [])
      output.push({
        id: next('fc'),
        type: 'function_call',
        status: done,
        arguments: c.arguments,
        call_id: c.callId ?? next('call'),
        name: c.name,
      });

    const reasoningTokens = action.reasoning !== undefined ? 16 + tokens((action.reasoning.summary ?? []).join('')) : 0;
    const usage =
      action.usage === null
        ? null
        : (() => {
            const u = action.usage ?? {
              input_tokens: tokens(JSON.stringify(body.input) + (body.instructions ?? '')),
              output_tokens:
                reasoningTokens +
                tokens((action.text ?? '') + (action.refusal ?? '') + JSON.stringify(action.toolCalls ?? [])),
            };
            return {
              input_tokens: u.input_tokens,
              input_tokens_details: { cached_tokens: 0, ...u.input_tokens_details },
              output_tokens: u.output_tokens,
              output_tokens_details: { reasoning_tokens: reasoningTokens, ...u.output_tokens_details },
              total_tokens: u.input_tokens + u.output_tokens,
              ...(u.cost !== undefined ? { cost: u.cost } : {}),
            };
          })();
    const id = next('resp');
    const createdAt = Math.floor(Date.now() / 1000);
    const response = (status: string, items: any[], extra: Record<string, unknown> = {}): Record<string, unknown> => ({
      id,
      object: 'response',
      created_at: createdAt,
      status,
      background: false,
      error: null,
      incomplete_details: status === 'incomplete' ? { reason: action.incomplete } : null,
      instructions: body.instructions ?? null,
      max_output_tokens: body.max_output_tokens ?? null,
      model,
      output: items,
      parallel_tool_calls: body.parallel_tool_calls ?? true,
      previous_response_id: null,
      reasoning: { effort: body.reasoning?.effort ?? null, summary: body.reasoning?.summary ?? null },
      store,
      temperature: body.temperature ?? 1,
      text: { format: { type: 'text' } },
      tool_choice: body.tool_choice ?? 'auto',
      tools: body.tools ?? [],
      top_p: body.top_p ?? 1,
      truncation: body.truncation ?? 'disabled',
      usage: null,
      user: null,
      metadata: body.metadata ?? {},
      ...extra,
    });
    const fail = action.fail;
    const finished = fail === undefined;
    if (finished && store) for (const item of output) memory.stored.add(item.id);

    if (!exchange.stream) {
      ex.json(
        200,
        fail !== undefined
          ? response('failed', [], { error: { code: fail.code, message: fail.message } })
          : response(done, output, { usage }),
      );
      return;
    }

    // Streaming: the lifecycle events, then each item (added, its deltas, done), then the end.
    const events: { type: string; [key: string]: unknown }[] = [];
    events.push({ type: 'response.created', response: response('in_progress', []) });
    events.push({ type: 'response.in_progress', response: response('in_progress', []) });
    output.forEach((item, output_index) => {
      const item_id = item.id;
      if (item.type === 'reasoning') {
        events.push({
          type: 'response.output_item.added',
          output_index,
          item: { ...item, summary: [], encrypted_content: undefined },
        });
        item.summary.forEach((part: { text: string }, summary_index: number) => {
          events.push({
            type: 'response.reasoning_summary_part.added',
            item_id,
            output_index,
            summary_index,
            part: { type: 'summary_text', text: '' },
          });
          for (const delta of pieces(part.text))
            events.push({ type: 'response.reasoning_summary_text.delta', item_id, output_index, summary_index, delta });
          events.push({
            type: 'response.reasoning_summary_text.done',
            item_id,
            output_index,
            summary_index,
            text: part.text,
          });
          events.push({ type: 'response.reasoning_summary_part.done', item_id, output_index, summary_index, part });
        });
      } else if (item.type === 'message') {
        events.push({
          type: 'response.output_item.added',
          output_index,
          item: { ...item, status: 'in_progress', content: [] },
        });
        item.content.forEach((part: any, content_index: number) => {
          events.push({
            type: 'response.content_part.added',
            item_id,
            output_index,
            content_index,
            part: part.type === 'output_text' ? { ...part, text: '' } : { ...part, refusal: '' },
          });
          if (part.type === 'output_text') {
            for (const delta of pieces(part.text))
              events.push({
                type: 'response.output_text.delta',
                item_id,
                output_index,
                content_index,
                delta,
                logprobs: [],
              });
            events.push({
              type: 'response.output_text.done',
              item_id,
              output_index,
              content_index,
              text: part.text,
              logprobs: [],
            });
          } else {
            for (const delta of pieces(part.refusal))
              events.push({ type: 'response.refusal.delta', item_id, output_index, content_index, delta });
            events.push({ type: 'response.refusal.done', item_id, output_index, content_index, refusal: part.refusal });
          }
          events.push({ type: 'response.content_part.done', item_id, output_index, content_index, part });
        });
      } else {
        events.push({
          type: 'response.output_item.added',
          output_index,
          item: { ...item, status: 'in_progress', arguments: '' },
        });
        for (const delta of pieces(item.arguments))
          events.push({ type: 'response.function_call_arguments.delta', item_id, output_index, delta });
        events.push({
          type: 'response.function_call_arguments.done',
          item_id,
          output_index,
          name: item.name,
          arguments: item.arguments,
        });
      }
      events.push({ type: 'response.output_item.done', output_index, item });
    });
    events.push({
      type: done === 'completed' ? 'response.completed' : 'response.incomplete',
      response: response(done, output, { usage }),
    });

    const sse = ex.sse();
    const send = (event: { type: string }, sequence_number: number): void =>
      sse.write(JSON.stringify({ ...event, sequence_number }), event.type);
    const failAt = fail === undefined ? undefined : Math.min(fail.afterEvents ?? 2, events.length - 1);
    for (const [i, event] of events.entries()) {
      if (action.dropAfterEvents !== undefined && i >= action.dropAfterEvents) return sse.drop();
      if (action.endAfterEvents !== undefined && i >= action.endAfterEvents) return sse.end();
      if (action.beforeEvent !== undefined) await action.beforeEvent(i, ex.closed);
      if (ex.closed.aborted) return;
      if (action.stallAfterEvents !== undefined && i >= action.stallAfterEvents) {
        await new Promise<void>((resolve) =>
          ex.closed.aborted ? resolve() : ex.closed.addEventListener('abort', () => resolve(), { once: true }),
        );
        return sse.end();
      }
      if (fail !== undefined && i === failAt) {
        const as = fail.as ?? 'error';
        if (as === 'response.failed')
          send(
            {
              type: 'response.failed',
              response: response('failed', [], { error: { code: fail.code, message: fail.message } }),
            } as { type: string },
            i,
          );
        else if (as === 'error-documented')
          send({ type: 'error', code: fail.code, message: fail.message, param: null } as { type: string }, i);
        else
          send(
            { type: 'error', error: { type: fail.code, code: fail.code, message: fail.message, param: null } } as {
              type: string;
            },
            i,
          );
        return sse.end();
      }
      send(event, i);
    }
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
