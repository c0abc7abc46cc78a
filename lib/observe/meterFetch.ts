import { InvalidArgumentError } from '../machine/InvalidArgumentError';
import { messageOf } from '../internal/messageOf';
import { oneLine } from '../internal/text';
import { ignore } from '../internal/ignore';
import { linkSignals } from '../internal/linkSignals';
import { OperationError } from '../agent/TurnError';
import { watchOutputBound } from '../agent/money/cutAtBound';
import { observeScope, type ObservedRun } from './observeScope';
import { foldStream } from './foldStream';
import { sseEvents } from './sseEvents';
import { stopResponse } from './stopResponse';
import { handedOnResponse } from './handedOnResponse';
import type { WireFormat } from './WireFormat';
import { WireError } from './WireError';

/** The shape of `fetch` that every SDK client here takes as its `fetch` option. */
export type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** The most of an error body kept in the record of a failed call. */
const ERROR_TEXT = 300;

/**
 * A `fetch` that meters the model calls of an observed run (`observeLoop`) where they are spent:
 * each HTTP request, an SDK's own retries included, is one attempt of the run's mirror.
 * - Its bound is read from the body the SDK sends (`format.bound`), and the attempt is gated
 *   and held against every budget before anything is sent. A refused request is never sent: it
 *   is answered with a 400 that no SDK retries, and the run ends with the refusal.
 * - In a resumed run, a call the journal answered is served from it, never sent again.
 * - The answer settles the attempt: a 2xx is read (`format.read`: usage, tool calls, model) and
 *   charged as billed, or at its worst case (uncertain) where it reports no usage; an error status
 *   is released or uncertain by the billing rules; a request that failed on the way, uncertain.
 *   A streamed answer is read beside the SDK as it arrives (`format.stream`) and cut at the
 *   request's max output tokens if the server does not stop there; it settles when it ends.
 *
 * Requests outside an observed run, and those that are not POSTs, go to `base` unmetered. A POST
 * inside one that no format knows is refused by name: its cost could not be bounded.
 */
export function meterFetch(formats: readonly WireFormat[], base: FetchLike = globalThis.fetch): FetchLike {
  if (!Array.isArray(formats) || formats.length === 0)
    throw new InvalidArgumentError('formats', 'a non-empty array of WireFormat', formats);
  if (typeof base !== 'function') throw new InvalidArgumentError('base', 'a fetch function', base);
  return async function meteredFetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
    const run = observeScope.getStore();
    const method = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
    if (run === undefined || method !== 'POST') return base(input, init);
    const url = new URL(input instanceof Request ? input.url : String(input));
    await run.settling;
    const ended = endedStop(run);
    if (ended !== undefined) return stopResponse(ended);
    const format = formats.find((f) => f.matches(url));
    if (format === undefined)
      return refuse(
        run,
        `the metered fetch cannot bound POST ${url.pathname}: it meters ${formats.map((f) => f.name).join(', ')}; make other requests with a client that does not use it`,
      );
    if (run.calling === true)
      return refuse(
        run,
        `the loop sent a ${format.name} request while another of the same run was unanswered: an observed run makes one model call at a time, as a turn does; make calls in parallel as tasks of their own (observeTask)`,
      );
    // Set before anything is awaited: a request of the same run sent meanwhile is refused above.
    run.calling = true;
    const settling = run.settling;
    try {
      return await meter(run, format, base, input, init, url);
    } finally {
      // A stream still being read ends the call when it settles.
      if (run.settling === settling) run.calling = false;
    }
  };
}

/** A model call's request inside an observed run: read, served from the journal, or gated and sent. */
async function meter(
  run: ObservedRun,
  format: WireFormat,
  base: FetchLike,
  input: string | URL | Request,
  init: RequestInit | undefined,
  url: URL,
): Promise<Response> {
  const body = await requestBody(input, init);
  // The run may have ended while the body was read (a refused request beside it).
  const ended = endedStop(run);
  if (ended !== undefined) return stopResponse(ended);
  if (typeof body === 'string') return refuse(run, `the metered fetch cannot read POST ${url.pathname}: ${body}`);
  const streamed = body.stream === true;
  if (streamed && format.stream === undefined)
    return refuse(
      run,
      `the metered fetch cannot read a streamed ${format.name} answer (stream: true): make the call without streaming`,
    );
  const served = run.mirror.recordedResponse();
  if (served !== undefined)
    return streamed ? sseResponse(format.stream!.serve(served, body)) : jsonResponse(format.serve(served, body));
  const bound = format.bound(body);
  const stop = await run.mirror.modelCallStart(
    typeof bound === 'string' ? undefined : bound,
    typeof bound === 'string' ? bound : undefined,
  );
  if (stop !== undefined) {
    run.stop = stop;
    return stopResponse(stop);
  }
  const maxOutputTokens = typeof bound === 'string' ? undefined : bound.maxOutputTokens;
  return send(run, format, base, input, init, streamed ? { maxOutputTokens } : undefined);
}

/**
 * Sends a gated request and settles its attempt from the answer. `stream`: the request is
 * streamed, and cut at its max output tokens.
 */
async function send(
  run: ObservedRun,
  format: WireFormat,
  base: FetchLike,
  input: string | URL | Request,
  init: RequestInit | undefined,
  stream: { maxOutputTokens: number | undefined } | undefined,
): Promise<Response> {
  const { mirror } = run;
  const link = linkedSignal(init?.signal, mirror.signal);
  const watch = stream === undefined ? undefined : watchOutputBound(stream.maxOutputTokens, link.signal);
  let answer: Response;
  try {
    answer = await base(input, { ...init, signal: watch?.signal ?? link.signal });
  } catch (error) {
    watch?.release();
    link.release();
    mirror.modelCallFailed(error);
    throw error;
  }
  if (watch === undefined || !answer.ok || answer.body === null) {
    watch?.release();
    try {
      return await settleWhole(mirror, format, answer);
    } finally {
      link.release();
    }
  }
  const fold = format.stream!.fold?.(watch);
  let theirs: ReadableStream<Uint8Array>;
  let folded: Promise<unknown>;
  if (fold !== undefined) ({ handedOn: theirs, folded } = foldStream(answer.body, fold));
  else {
    let mine: ReadableStream<Uint8Array>;
    [mine, theirs] = answer.body.tee();
    folded = format.stream!.collect(sseEvents(mine), watch);
  }
  run.settling = settleStream(mirror, format, folded, watch).finally(() => {
    link.release();
    run.calling = false;
  });
  return handOn(answer, theirs);
}

/** Reads a whole answer, settles its attempt, and hands the SDK the same answer. */
async function settleWhole(mirror: ObservedRun['mirror'], format: WireFormat, answer: Response): Promise<Response> {
  let text: string;
  try {
    text = await answer.text();
  } catch (error) {
    mirror.modelCallFailed(error);
    throw error;
  }
  if (!answer.ok) mirror.modelCallFailed(new WireError(answer.status, errorText(format, answer.status, text)));
  else {
    try {
      mirror.modelResponse(format.read(JSON.parse(text)));
    } catch (error) {
      // Answered, but not as the API answers: it may have been billed, at a cost nobody knows.
      mirror.modelCallFailed(
        new Error(
          `${format.name} answered ${answer.status} with a body it could not read: ${oneLine(messageOf(error))}`,
        ),
      );
    }
  }
  return handOn(answer, text);
}

/** Settles a streamed answer's attempt from its fold, read beside the SDK, when it ends (cut, dropped or whole). */
async function settleStream(
  mirror: ObservedRun['mirror'],
  format: WireFormat,
  folded: Promise<unknown>,
  watch: ReturnType<typeof watchOutputBound>,
): Promise<void> {
  try {
    mirror.modelResponse(format.read(await folded));
  } catch (error) {
    mirror.modelCallFailed(error);
  } finally {
    watch.release();
  }
}

/**
 * The request's signal: the SDK's and the run's, linked by hand until `release` (when the answer
 * has been read). `AbortSignal.any` would keep every signal it made on the run's long-lived one,
 * and costs a JSON answer of the `meter` bench 3% of its CPU.
 */
function linkedSignal(
  own: AbortSignal | null | undefined,
  run: AbortSignal,
): { signal: AbortSignal; release: () => void } {
  if (own == null) return { signal: run, release: ignore };
  const controller = new AbortController();
  return { signal: controller.signal, release: linkSignals(controller, [own, run]) };
}

/** Statuses whose response has no body: `Response` refuses one. */
const NULL_BODY: ReadonlySet<number> = new Set([204, 205, 304]);

/** The answer as the SDK gets it: its status and headers, with `body` (decoded) in place of its own. */
function handOn(answer: Response, body: string | ReadableStream<Uint8Array>): Response {
  const init = { status: answer.status, statusText: answer.statusText, headers: answer.headers };
  const handed = NULL_BODY.has(answer.status)
    ? new Response(null, init)
    : typeof body === 'string'
      ? handedOnResponse(body, init)
      : new Response(body, init);
  // The body handed on is decoded: its encoding and length are no longer the answer's.
  if (answer.headers.has('content-encoding')) handed.headers.delete('content-encoding');
  if (answer.headers.has('content-length')) handed.headers.delete('content-length');
  return handed;
}

/** Why a run that has ended refuses further requests, or undefined while it runs. */
function endedStop(run: ObservedRun): Parameters<typeof stopResponse>[0] | undefined {
  if (run.stop !== undefined) return run.stop;
  if (run.mirror.running) return undefined;
  const error = run.mirror.result?.error;
  return new OperationError('observeLoop', error ?? new Error('the observed run has ended'));
}

/** A request the fetch cannot meter: the run ends in Error with the reason, and the SDK gets a 400. */
function refuse(run: ObservedRun, why: string): Response {
  const stop = new OperationError('observeLoop', new Error(why));
  run.mirror.runFailed(stop);
  run.stop = stop;
  return stopResponse(stop);
}

/** The request's JSON body, or why it has none. */
async function requestBody(
  input: string | URL | Request,
  init: RequestInit | undefined,
): Promise<Record<string, unknown> | string> {
  let text: string;
  const raw = init?.body ?? undefined;
  if (typeof raw === 'string') text = raw;
  else if (raw === undefined && input instanceof Request) text = await input.clone().text();
  else if (raw instanceof Uint8Array || raw instanceof ArrayBuffer) text = new TextDecoder().decode(raw);
  else return `its body is ${raw === undefined ? 'missing' : 'not text'}, not the JSON of a model call`;
  try {
    const body: unknown = JSON.parse(text);
    if (typeof body === 'object' && body !== null && !Array.isArray(body)) return body as Record<string, unknown>;
  } catch {
    // Said below.
  }
  return 'its body is not a JSON object';
}

/** A recorded answer as the API streams one: each event's JSON (a string as it is) as a `data:` line. */
function sseResponse(events: readonly unknown[]): Response {
  const text = events
    .map((e) => {
      const type = typeof e === 'object' && e !== null ? (e as { type?: unknown }).type : undefined;
      return `${typeof type === 'string' ? `event: ${type}\n` : ''}data: ${typeof e === 'string' ? e : JSON.stringify(e)}\n\n`;
    })
    .join('');
  return new Response(text, { status: 200, headers: { 'content-type': 'text/event-stream' } });
}

function jsonResponse(body: unknown): Response {
  return new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } });
}

function errorText(format: WireFormat, status: number, text: string): string {
  const shown = oneLine(text).slice(0, ERROR_TEXT);
  return `${format.name} answered ${status}${shown === '' ? '' : `: ${shown}`}`;
}
