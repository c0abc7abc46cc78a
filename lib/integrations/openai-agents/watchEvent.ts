import type { OutputBoundWatch } from 'agent-state-machine';

/** The raw events of the Responses API that carry output besides its text. */
const RESPONSES_DELTAS = new Set([
  'response.refusal.delta',
  'response.function_call_arguments.delta',
  'response.reasoning_text.delta',
  'response.reasoning_summary_text.delta',
]);

/** A Chat Completions chunk's delta, as far as it carries output besides its text. */
interface ChatDelta {
  tool_calls?: { function?: { arguments?: unknown } }[];
  reasoning?: unknown;
  reasoning_content?: unknown;
  refusal?: unknown;
}

/**
 * Counts one event of a `Model`'s stream against the call's bound: its text deltas
 * (`output_text_delta`), and the tool-call arguments, reasoning and refusals of the raw
 * `model` events (Responses events or Chat Completions chunks, as the SDK's OpenAI models
 * give them). Throws `StreamCutError` once the bound is reached. A whole response's usage is
 * not counted here: it is charged, and reported as past its bound, when it comes.
 */
export function watchEvent(watch: OutputBoundWatch, event: unknown): void {
  const e = event as { type?: unknown; delta?: unknown; event?: unknown };
  if (e?.type === 'output_text_delta') {
    if (typeof e.delta === 'string') watch.add(e.delta);
    return;
  }
  if (e?.type !== 'model' || typeof e.event !== 'object' || e.event === null) return;
  const raw = e.event as { type?: unknown; delta?: unknown; choices?: { delta?: ChatDelta }[] };
  if (typeof raw.type === 'string') {
    if (RESPONSES_DELTAS.has(raw.type) && typeof raw.delta === 'string') watch.add(raw.delta);
    return;
  }
  for (const choice of Array.isArray(raw.choices) ? raw.choices : []) {
    const delta = choice?.delta;
    if (delta === undefined || delta === null) continue;
    for (const c of delta.tool_calls ?? [])
      if (typeof c?.function?.arguments === 'string') watch.add(c.function.arguments);
    for (const text of [delta.reasoning, delta.reasoning_content, delta.refusal])
      if (typeof text === 'string') watch.add(text);
  }
}
