import type { HttpExchangeLine } from '../history/HistoryEntry';
import { JsonlHistorySink } from '../history/JsonlHistorySink';
import type { JsonlHistorySinkOptions } from '../history/JsonlHistorySinkOptions';
import { redactCredentials } from '../agent/journal/redactCredentials';
import { InvalidArgumentError } from '../machine/InvalidArgumentError';
import type { JournalLine } from '../machine/StateMachine';
import { messageOf } from '../internal/messageOf';
import { parseJsonOrText } from '../internal/parseJsonOrText';

/** What `fetch` is, as the SDK clients take it (`new OpenAI({ fetch })`, `new Anthropic({ fetch })`, `createOpenAI({ fetch })`). */
export type FetchFunction = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** An HTTP exchange before it is written: the line without the `seq` the sink stamps. */
export type HttpExchange = Omit<HttpExchangeLine, 'seq'>;

/** Options of `recordFetch`: where the exchanges go (`sink` or `file`), and what to wrap. */
export interface RecordFetchOptions {
  /**
   * The run's history sink (a `JsonlHistorySink`, or any sink with a `journal` method): each
   * exchange becomes an `http` line of the run's file, in order with its moves.
   */
  sink?: { journal(line: JournalLine): void };
  /** Or a file of exchanges alone (JSON Lines, no meta line); refused when it exists, as history files are. */
  file?: string;
  /** With `file`: when its lines are forced to the disk. Default `'move'`: after every exchange. */
  durability?: JsonlHistorySinkOptions['durability'];
  /** The fetch to wrap. Default: `globalThis.fetch`. */
  fetch?: FetchFunction;
  /**
   * Sees each exchange before it is written (after the default redaction of credential-named
   * fields) and returns what to write. A redact that throws writes the exchange's call number,
   * times, method and path only.
   */
  redact?: (exchange: HttpExchange) => HttpExchange;
}

/** A recording fetch: pass it as an SDK client's `fetch`. */
export interface RecordingFetch extends FetchFunction {
  /** Requests sent so far. */
  readonly calls: number;
  /** Waits for the exchanges whose bodies are still arriving to be written, then closes the `file` (a `sink` stays open). */
  close(): Promise<void>;
}

/** Response headers a replay needs: how to parse the body, and the SDKs' retry decisions. */
const KEPT_HEADER =
  /^(content-type|retry-after|retry-after-ms|x-should-retry|x-request-id|request-id|(x|anthropic)-ratelimit-.*)$/i;

/**
 * Wraps `fetch` so that every HTTP exchange an SDK client makes is written down: the request's
 * method, path, query and body (parsed when JSON), and the response's status, the headers that
 * matter and its body as text (a streamed body whole, recorded as the client reads it, which
 * still gets it piece by piece). Request headers are never written (they carry the API key),
 * and credential-named fields are redacted as in the journal. `replayFetch` answers the same
 * requests from the recording, with no network.
 */
export function recordFetch(options: RecordFetchOptions): RecordingFetch {
  if (typeof options !== 'object' || options === null)
    throw new InvalidArgumentError('options', 'an object { sink } or { file }', options);
  const { sink, file, redact, fetch: inner = globalThis.fetch } = options;
  if ((sink === undefined) === (file === undefined))
    throw new InvalidArgumentError('options', 'exactly one of sink (a history sink) or file (a path)', options);
  if (sink !== undefined && typeof sink?.journal !== 'function')
    throw new InvalidArgumentError('sink', 'a history sink with a journal method (JsonlHistorySink)', sink);
  if (typeof inner !== 'function') throw new InvalidArgumentError('fetch', 'a fetch function', inner);
  if (redact !== undefined && typeof redact !== 'function')
    throw new InvalidArgumentError('redact', 'a function', redact);
  const own =
    file === undefined
      ? undefined
      : JsonlHistorySink.open(file, { meta: false, durability: options.durability ?? 'move' });
  const target = sink ?? own!;
  const pending = new Set<Promise<void>>();
  let calls = 0;

  const write = (exchange: HttpExchange): void => {
    let clean: HttpExchange;
    try {
      const redacted = redactCredentials(exchange);
      clean = redact === undefined ? redacted : redact(redacted);
    } catch (error) {
      const { call, startedAt, endedAt, request } = exchange;
      clean = {
        type: 'http',
        call,
        startedAt,
        endedAt,
        request: { method: request.method, path: request.path },
        error: { name: 'RedactError', message: `redact threw: ${messageOf(error)}; the exchange was not written` },
      };
    }
    target.journal(clean);
  };

  const recording = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const call = ++calls;
    const startedAt = Date.now();
    const request = await requestOf(input, init);
    let response: Response;
    try {
      response = await inner(input, init);
    } catch (error) {
      write({ type: 'http', call, startedAt, endedAt: Date.now(), request, error: errorOf(error) });
      throw error;
    }
    const status = response.status;
    const headers: Record<string, string> = {};
    response.headers.forEach((value, name) => {
      if (KEPT_HEADER.test(name)) headers[name.toLowerCase()] = value;
    });
    if (response.body === null) {
      write({ type: 'http', call, startedAt, endedAt: Date.now(), request, response: { status, headers, body: '' } });
      return response;
    }
    // The client reads one branch as it arrives; the other is read whole for the recording.
    const [forClient, forRecord] = response.body.tee();
    const done = readText(forRecord).then(({ text, error }) =>
      write({
        type: 'http',
        call,
        startedAt,
        endedAt: Date.now(),
        request,
        response: { status, headers, body: text },
        ...(error === undefined ? {} : { error }),
      }),
    );
    pending.add(done);
    void done.finally(() => pending.delete(done));
    return new Response(forClient, { status, statusText: response.statusText, headers: response.headers });
  };

  // A getter, not a copy: Object.assign would read `calls` once.
  return Object.defineProperties(recording, {
    calls: { get: () => calls },
    close: {
      value: async (): Promise<void> => {
        while (pending.size > 0) await Promise.allSettled([...pending]);
        own?.close();
      },
    },
  }) as RecordingFetch;
}

/** The request as a recording keeps it: no headers, the origin dropped, the body parsed when JSON. */
async function requestOf(
  input: string | URL | Request,
  init: RequestInit | undefined,
): Promise<HttpExchange['request']> {
  const url = new URL(input instanceof Request ? input.url : String(input));
  const method = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
  const query: Record<string, string> = {};
  url.searchParams.forEach((value, name) => (query[name] = value));
  const text =
    init?.body !== undefined && init.body !== null
      ? await bodyText(init.body)
      : input instanceof Request && input.body !== null
        ? await input.clone().text()
        : undefined;
  const out: { method: string; path: string; query?: Record<string, string>; body?: unknown } = {
    method,
    path: url.pathname,
  };
  if (url.search !== '') out.query = query;
  if (text !== undefined) out.body = parseJsonOrText(text);
  return out;
}

async function bodyText(body: NonNullable<RequestInit['body']>): Promise<string> {
  if (typeof body === 'string') return body;
  if (body instanceof URLSearchParams) return body.toString();
  if (body instanceof ArrayBuffer || ArrayBuffer.isView(body)) return new TextDecoder().decode(body as Uint8Array);
  // Blob, FormData, or a stream: Response reads each as the network would send it (a stream is used up).
  if (body instanceof ReadableStream) return '[a streamed request body, not recorded]';
  return new Response(body).text();
}

/** Reads a body branch to its end; a body that breaks off keeps what came and says why. */
async function readText(
  stream: ReadableStream<Uint8Array>,
): Promise<{ text: string; error?: { name: string; message: string } }> {
  const decoder = new TextDecoder();
  const reader = stream.getReader();
  let text = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    return { text: text + decoder.decode() };
  } catch (error) {
    return { text, error: errorOf(error) };
  }
}

function errorOf(error: unknown): { name: string; message: string } {
  return { name: error instanceof Error ? error.name : 'Error', message: messageOf(error) };
}
