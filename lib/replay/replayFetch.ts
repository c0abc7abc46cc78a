import type { HttpExchangeLine } from '../history/HistoryEntry';
import { loadHistory } from '../history/loadHistory';
import { InvalidArgumentError } from '../machine/InvalidArgumentError';
import { firstJsonDifference } from './firstJsonDifference';
import type { FetchFunction } from './recordFetch';
import { ReplayDivergedError } from './ReplayDivergedError';

/** A fetch that answers from a recording: pass it as an SDK client's `fetch`. */
export interface ReplayingFetch extends FetchFunction {
  /** Requests answered from the recording so far. */
  readonly calls: number;
  /** How many the recording holds. */
  readonly recorded: number;
  /** Why the replay stopped, once a request differed from the recording. */
  readonly diverged: ReplayDivergedError | undefined;
}

/**
 * A `fetch` that answers an SDK client's requests from what `recordFetch` wrote, in the order
 * they were recorded, with no network: the way to re-run one's own loop code, with a debugger,
 * at no cost. `recording` is a file (a run's history file or a file of exchanges alone) or the
 * exchanges themselves (`loadHistory(file).exchanges`).
 *
 * Each request must be the recorded one: the same method, path, query and body. The first that
 * differs stops the replay: it and every later request are answered with an HTTP 400 whose
 * message is `diverged at LLM call N: <what differed>` (the first differing JSON path, such as
 * `body.messages[3].content`, with both values), and `x-should-retry: false`, so the SDK throws
 * it at once rather than retrying; `diverged` holds the same error.
 */
export async function replayFetch(recording: string | readonly HttpExchangeLine[]): Promise<ReplayingFetch> {
  let exchanges: readonly HttpExchangeLine[];
  if (typeof recording === 'string') exchanges = (await loadHistory(recording)).exchanges;
  else if (Array.isArray(recording)) exchanges = recording;
  else
    throw new InvalidArgumentError(
      'recording',
      'a file recordFetch wrote, or its exchanges (loadHistory(file).exchanges)',
      recording,
    );
  if (exchanges.length === 0)
    throw new InvalidArgumentError(
      'recording',
      'a recording with at least one HTTP exchange (was the client given fetch: recordFetch(...)?)',
      typeof recording === 'string' ? recording : '[]',
    );
  // Written when each body ended, so concurrent calls may be out of order in the file.
  const ordered = [...exchanges].sort((a, b) => a.call - b.call);
  let calls = 0;
  let diverged: ReplayDivergedError | undefined;

  const replaying = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const n = calls + 1;
    if (diverged === undefined) {
      const recorded = ordered[calls];
      const sent = await sentRequest(input, init);
      const difference =
        recorded === undefined
          ? `${sent.method} ${sent.path} was sent, the recording holds ${ordered.length} call${ordered.length === 1 ? '' : 's'}`
          : differenceOf(recorded.request, sent);
      if (difference === undefined) {
        calls = n;
        return answer(recorded!, init?.signal ?? (input instanceof Request ? input.signal : undefined));
      }
      diverged = new ReplayDivergedError(n, difference);
    }
    const message = diverged.message;
    return new Response(
      JSON.stringify({ type: 'error', message, error: { type: 'replay_diverged', code: 'replay_diverged', message } }),
      { status: 400, headers: { 'content-type': 'application/json', 'x-should-retry': 'false' } },
    );
  };

  // Getters, not copies: Object.assign would read each once.
  return Object.defineProperties(replaying, {
    calls: { get: () => calls },
    recorded: { value: ordered.length },
    diverged: { get: () => diverged },
  }) as ReplayingFetch;
}

/** What differed between the recorded request and the one sent, in words, or undefined. */
function differenceOf(recorded: HttpExchangeLine['request'], sent: SentRequest): string | undefined {
  if (recorded.method !== sent.method || recorded.path !== sent.path)
    return `the request was ${sent.method} ${sent.path}, the recording has ${recorded.method} ${recorded.path}`;
  const d =
    firstJsonDifference(recorded.query ?? {}, sent.query ?? {}, 'query') ??
    firstJsonDifference(recorded.body, sent.body, 'body');
  if (d === undefined) return undefined;
  return `${d.path} differs: recorded ${show(d.recorded)}, sent ${show(d.sent)}`;
}

interface SentRequest {
  method: string;
  path: string;
  query?: Record<string, string>;
  body?: unknown;
}

async function sentRequest(input: string | URL | Request, init: RequestInit | undefined): Promise<SentRequest> {
  const url = new URL(input instanceof Request ? input.url : String(input));
  const method = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
  const out: SentRequest = { method, path: url.pathname };
  if (url.search !== '') {
    const query: Record<string, string> = {};
    url.searchParams.forEach((value, name) => (query[name] = value));
    out.query = query;
  }
  const body = init?.body ?? (input instanceof Request ? input.body : null);
  if (body !== null && body !== undefined) {
    const text = await new Response(body).text();
    try {
      out.body = JSON.parse(text);
    } catch {
      out.body = text;
    }
  }
  return out;
}

/** The recorded response; one that failed or broke off fails the same way. */
function answer(recorded: HttpExchangeLine, signal: AbortSignal | null | undefined): Promise<Response> {
  const { response, error } = recorded;
  const failure = (): Error =>
    Object.assign(new Error(error?.message ?? 'the recorded request failed'), { name: error?.name ?? 'Error' });
  if (signal?.aborted) return Promise.reject(signal.reason);
  if (response === undefined) return Promise.reject(failure());
  const bytes = new TextEncoder().encode(response.body);
  let given = false;
  const body =
    error === undefined
      ? bytes
      : // What came, then the error on the next read (erroring at once would drop the queued bytes).
        new ReadableStream<Uint8Array>(
          {
            pull(controller) {
              if (given) return controller.error(failure());
              given = true;
              controller.enqueue(bytes);
            },
          },
          { highWaterMark: 0 },
        );
  // A null-body status (204, 304) takes no body.
  const nullBody = response.status === 204 || response.status === 205 || response.status === 304;
  return Promise.resolve(new Response(nullBody ? null : body, { status: response.status, headers: response.headers }));
}

function show(value: unknown): string {
  if (value === undefined) return 'nothing';
  const text = JSON.stringify(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
