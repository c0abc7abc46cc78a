import type { OutputBoundWatch } from 'agent-state-machine';

/** What LangChain hands `handleLLMNewToken` beside the token: the chunk it came in (read as plain fields). */
interface TokenFields {
  chunk?: {
    message?: {
      tool_call_chunks?: { args?: unknown }[];
      additional_kwargs?: { reasoning_content?: unknown };
    };
  };
}

/**
 * Counts one streamed token callback against its call's bound: the text, the tool-call
 * arguments and reasoning the chunk carries (a whole response's usage is the mirror's to
 * charge, and to report as past its bound). Throws `StreamCutError` once the bound is reached: thrown from the
 * callback, it ends the chat model's stream, and with it the request.
 */
export function watchToken(watch: OutputBoundWatch, token: string, fields: unknown): void {
  const message = (fields as TokenFields | undefined)?.chunk?.message;
  watch.add(typeof token === 'string' ? token : '');
  for (const c of message?.tool_call_chunks ?? []) if (typeof c?.args === 'string') watch.add(c.args);
  const reasoning = message?.additional_kwargs?.reasoning_content;
  if (typeof reasoning === 'string') watch.add(reasoning);
}

/**
 * Counts one of LangChain's chat model stream events (the path a handler that prefers them,
 * LangGraph's `streamMode: 'messages'` in its v3 protocol, makes LangChain take, where no token
 * callback is made): the text, reasoning and tool-call arguments of a content block's delta.
 * Throws `StreamCutError` once the bound is reached, as `watchToken` does.
 */
export function watchStreamEvent(watch: OutputBoundWatch, event: unknown): void {
  const e = event as { event?: unknown; delta?: { text?: unknown; reasoning?: unknown; args?: unknown } } | undefined;
  if (e?.event !== 'content-block-delta') return;
  for (const text of [e.delta?.text, e.delta?.reasoning, e.delta?.args]) if (typeof text === 'string') watch.add(text);
}
