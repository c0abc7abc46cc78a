import type { HistoryItem } from '../history/HistoryEntry';
import { InvalidArgumentError } from '../machine/InvalidArgumentError';
import { INSTRUMENTATION_SCOPE } from '../internal/genAiConventions';
import { VERSION } from '../internal/version';
import type { OtlpResourceSpans, OtlpSpan, OtlpTraceExport } from './OtlpJson';
import { OtlpSpanStream, type HistoryToOtlpOptions } from './OtlpSpanStream';
import { attrs } from './otlpValues';

export type { HistoryToOtlpOptions } from './OtlpSpanStream';
export { attrs, nanos } from './otlpValues';

/**
 * Rebuilds OTLP/JSON spans from a run's history, for a run that was not traced live: one trace
 * per turn (`invoke_agent`, from its move into WaitingForUserInput to its terminal move, with
 * every move as a span event), a `chat` span per LLM call (the time spent in the sending
 * state, with the attempts and the usage the records carry), and an `execute_tool` span per
 * tool call (from the tool results kept in the record that leaves RunningTool). Pure: the same
 * history and options give the same output, ids included.
 *
 * What a file cannot say is left out rather than guessed: a call's retries appear as one
 * `chat` span with `agent_state_machine.llm.attempts` and an event per failed attempt. A
 * tool's start is its recorded start if any; else the end of the tool before it, or — when the
 * tools' times add up to more than RunningTool lasted, so they ran at once — its entry. How each
 * turn ended and what it spent are `runFacts`'s, as every reader of the file has them.
 *
 * Times that cannot be real are refused or clamped. The export is built in memory; for a file
 * of any size in bounded memory, `agent-sm export otlp` writes it span by span. The spans are
 * listed in the order they start, each turn before its calls.
 */
export function historyToOtlp(items: readonly HistoryItem[], options: HistoryToOtlpOptions = {}): OtlpTraceExport {
  if (!Array.isArray(items)) throw new InvalidArgumentError('items', 'an array of history entries or records', items);
  // The stream emits a span when it ends; the array lists them by when they were made.
  const spans: OtlpSpan[] = [];
  const stream = new OtlpSpanStream(options, (span, order) => void (spans[order - 1] = span));
  for (const item of items) stream.add(item);
  stream.end();
  return { resourceSpans: [otlpResource(options, spans)] };
}

/** The resource and scope around `spans`: the export's envelope. */
export function otlpResource(options: Pick<HistoryToOtlpOptions, 'serviceName'>, spans: OtlpSpan[]): OtlpResourceSpans {
  return {
    resource: { attributes: attrs({ 'service.name': options.serviceName ?? 'agent-state-machine' }) },
    scopeSpans: [{ scope: { name: INSTRUMENTATION_SCOPE, version: VERSION }, spans }],
  };
}
