import type { ContentBlock, Message, RawMessageStreamEvent } from '@anthropic-ai/sdk/resources/messages';
import type { OutputBoundWatch } from 'agent-state-machine';

/** The message a stream stood for, and the tool input streamed as text that did not parse (by block id). */
export interface CollectedMessage {
  message: Message;
  badInput: Map<string, string>;
}

/**
 * Folds a Messages stream's events into the message they stand for, as the SDK's own
 * `MessageStream` does: the message `message_start` carries is kept whole (its content too: a
 * response can arrive complete in it), and a `tool_use` or `server_tool_use` block keeps the
 * input its `content_block_start` carries unless `input_json_delta`s follow (programmatic tool
 * calls arrive whole, with no delta).
 *
 * Written here, not taken from `MessageStream`, for three reasons: its `message_delta` copies
 * named usage fields only and drops `usage.iterations` (the compaction and server-side
 * iterations that are billed); it reads streamed tool input with a partial-JSON parser, so
 * input that does not parse becomes a silent partial object, where this loop tells the LLM;
 * and it runs only on a request it makes itself or on re-serialised bytes.
 *
 * A stream that ends before `message_stop` was dropped: that is an error (so the attempt is
 * retried), never a short answer.
 */
export async function collectMessageStream(
  events: AsyncIterable<RawMessageStreamEvent>,
  onText: (delta: string) => void,
  watch: OutputBoundWatch,
): Promise<CollectedMessage> {
  let message: Message | undefined;
  // Streamed tool input by block index, present only once an input_json_delta came.
  const json = new Map<number, string>();
  const badInput = new Map<string, string>();
  let stopped = false;
  const arrived = (block: ContentBlock): void => {
    // Text and thinking that arrive whole are output like streamed text: shown and counted.
    const whole = block.type === 'text' ? block.text : block.type === 'thinking' ? block.thinking : '';
    if (whole === '') return;
    if (block.type === 'text') onText(whole);
    watch.add(whole);
  };
  for await (const event of events) {
    switch (event.type) {
      case 'message_start':
        message = structuredClone(event.message);
        message.content ??= [];
        for (const block of message.content) arrived(block);
        break;
      case 'content_block_start':
        if (message === undefined) throw new Error('the response stream sent a content block before message_start');
        message.content[event.index] = structuredClone(event.content_block);
        arrived(event.content_block);
        break;
      case 'content_block_delta': {
        const block = message?.content[event.index] as Record<string, unknown> | undefined;
        if (block === undefined)
          throw new Error(`the response stream sent a delta for block ${event.index} before its start`);
        const d = event.delta;
        if (d.type === 'text_delta') {
          block.text = String(block.text ?? '') + d.text;
          onText(d.text);
          watch.add(d.text);
        } else if (d.type === 'input_json_delta') {
          json.set(event.index, (json.get(event.index) ?? '') + d.partial_json);
          watch.add(d.partial_json);
        } else if (d.type === 'thinking_delta') {
          block.thinking = String(block.thinking ?? '') + d.thinking;
          watch.add(d.thinking);
        } else if (d.type === 'signature_delta') block.signature = d.signature;
        else if (d.type === 'citations_delta')
          block.citations = [...((block.citations as unknown[] | null | undefined) ?? []), d.citation];
        break;
      }
      case 'content_block_stop': {
        const block = message?.content[event.index];
        const raw = json.get(event.index);
        // Only deltas that say something replace the input the block started with.
        if (
          (block?.type === 'tool_use' || block?.type === 'server_tool_use') &&
          raw !== undefined &&
          raw.trim() !== ''
        ) {
          try {
            block.input = JSON.parse(raw);
          } catch {
            block.input = {};
            badInput.set(block.id, raw);
          }
        }
        break;
      }
      case 'message_delta':
        if (message === undefined) throw new Error('the response stream sent message_delta before message_start');
        message.stop_reason = event.delta.stop_reason;
        message.stop_sequence = event.delta.stop_sequence;
        // Its usage figures are whole-message totals (iterations among them): each one given replaces.
        message.usage = { ...message.usage, ...definedOnly(event.usage) } as Message['usage'];
        break;
      case 'message_stop':
        stopped = true;
        break;
    }
  }
  if (message === undefined || !stopped)
    throw new Error('the response stream ended before message_stop: the connection was dropped');
  message.content = message.content.filter(Boolean);
  return { message, badInput };
}

function definedOnly(usage: object): Record<string, unknown> {
  return Object.fromEntries(Object.entries(usage).filter(([, v]) => v !== null && v !== undefined));
}
