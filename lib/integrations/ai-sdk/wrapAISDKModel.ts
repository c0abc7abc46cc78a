import type { LanguageModel } from 'ai';
import { InvalidArgumentError, watchOutputBound, type OutputBoundWatch } from 'agent-state-machine';
import { readableOf } from '../../internal/readableOf';
import { readerParts } from '../../internal/readerParts';
import { parseJsonOrText } from '../../internal/parseJsonOrText';
import type { AISDKRun } from './AISDKRun';
import { StreamCollector, type ModelCallResult } from './modelResponseOf';
import { recordedResult, recordedStream } from './recordedModelResult';
import type { CallOptions } from './withFlags';

/** A part of a model's stream, as the SDK's providers make them. */
type Part = { type: string; [key: string]: unknown };

/** A signal that never aborts, for a call the SDK gave none. */
const NEVER = new AbortController().signal;

/** Counts a streamed part's output against the request's bound (text, reasoning and tool input as they arrive). */
function watchPart(watch: OutputBoundWatch, part: Part): void {
  if (part.type === 'text-delta' || part.type === 'reasoning-delta' || part.type === 'tool-input-delta') {
    const delta = typeof part.delta === 'string' ? part.delta : part.textDelta;
    if (typeof delta === 'string') watch.add(delta);
  }
  // The finish part's usage is not counted here: the response is whole by then, so it is charged
  // at the usage it reports, and one past its bound is a `boundExceeded` fact, as for the other
  // mirrors; a cut there would charge only the hold, less than the server billed.
}

/**
 * Wraps a model for `mirrorAISDK`: each attempt (the SDK's retries included) goes through the
 * mirror (`run`), checked, recorded and charged; a resumed run's served calls are answered from
 * the journal; a streamed call is cut at its `maxOutputTokens`.
 */
export function wrapAISDKModel<M extends LanguageModel>(m: M, run: AISDKRun): M {
  if (typeof m !== 'object' || m === null || typeof (m as { doGenerate?: unknown }).doGenerate !== 'function')
    throw new InvalidArgumentError('model', "a language model object (a provider's model, not an id string)", m);
  const inner = m as unknown as {
    modelId?: string;
    specificationVersion?: unknown;
    doGenerate(o: CallOptions): PromiseLike<ModelCallResult>;
    doStream(o: CallOptions): PromiseLike<{ stream: ReadableStream<Part> }>;
  };
  const generated = run.generatedBy(
    inner.modelId,
    (sent) => inner.doGenerate(sent),
    (served) => recordedResult(served, inner.specificationVersion) as ModelCallResult,
  );
  const doGenerate = (o: CallOptions): Promise<ModelCallResult> => run.generate(o, generated);
  const doStream = (o: CallOptions): Promise<{ stream: ReadableStream<Part> }> => {
    // The stream is cut at the request's max output tokens, whether the provider stops there or
    // not: what it may bill stays within the call's hold.
    const max = typeof o.maxOutputTokens === 'number' ? o.maxOutputTokens : undefined;
    const collector = new StreamCollector();
    let watch: OutputBoundWatch | undefined;
    let source: ReadableStreamDefaultReader<Part> | undefined;
    let reported: (() => void) | undefined;
    // A stream cancelled by an abort may never end: its waiting tools go on to meet the abort.
    // The listener goes once the stream ends, or one a call would pile up on the mirror's signal.
    const aborted = run.mirror.signal;
    let over = false;
    const settled = (): void => {
      if (over) return;
      over = true;
      aborted.removeEventListener('abort', settled);
      watch?.release();
      if (reported === undefined) return;
      run.streaming = undefined;
      reported();
    };
    return run.stream<{ stream: ReadableStream<Part> }, Part>(o, inner.modelId, {
      serve: (served) => ({ stream: recordedStream(served, inner.specificationVersion) }),
      open: async (sent) => {
        const bound = watchOutputBound(max, o.abortSignal ?? NEVER);
        watch = bound;
        const result = await inner.doStream(max === undefined ? sent : { ...sent, abortSignal: bound.signal });
        // The SDK starts a streamed call's tools as their parts arrive, before the usage at the
        // end: they wait until the response is reported, so the moves keep the table's order.
        run.streaming = new Promise<void>((resolve) => (reported = resolve));
        aborted.addEventListener('abort', settled, { once: true });
        return result;
      },
      // Read through a reader of its own: the SDK cancelling the stream cancels the provider's at once.
      parts: (result) => readerParts((source = result.stream.getReader())),
      withParts: (result, parts) => ({ ...result, stream: readableOf(parts, (reason) => source?.cancel(reason)) }),
      read: (part) => {
        watchPart(watch!, part);
        // A call the `approve` policy names whose tool does not carry it: the SDK never sees it (its tool would run unasked).
        if (part.type === 'tool-call') throwUncarried(run, part);
        collector.add(part);
        // An error part that carries no error says nothing: the finish after it is charged by its usage.
        if (part.type === 'error' && collector.error !== undefined) return { failed: collector.error };
        return part.type === 'finish' ? collector.result() : undefined;
      },
      settled,
    });
  };
  return Object.create(m as object, {
    doGenerate: { value: doGenerate, enumerable: true, writable: true, configurable: true },
    doStream: { value: doStream, enumerable: true, writable: true, configurable: true },
  }) as M;
}

/** Throws the mirror's refusal of a streamed tool call whose tool does not carry the `approve` policy. */
function throwUncarried(run: AISDKRun, part: { [key: string]: unknown }): void {
  const { approvals } = run.mirror;
  if (approvals.policy === undefined) return;
  const input = typeof part.input === 'string' ? parseJsonOrText(part.input) : part.input;
  const refused = approvals.uncarried([{ id: String(part.toolCallId), name: String(part.toolName), input }]);
  if (refused !== undefined) throw refused;
}
