import type {
  ResponseFunctionToolCall,
  ResponseInputItem,
  ResponseOutputItem,
} from 'openai/resources/responses/responses';
import type { ToolCall } from 'agent-state-machine';
import { uniqueCallIds } from '../../internal/uniqueCallIds';

/**
 * What one response adds to the conversation, the tool calls it asks for and its text. Output
 * items go back as the API returned them, except: a `function_call` keeps only what pairs it
 * with its output (`call_id`, `name`, `arguments`); with `store: false` messages lose their
 * ids (nothing was stored under them); a reasoning item that cannot be sent back is left out —
 * one without encrypted content under `store: false` (the API answers "Item with id 'rs_…' not
 * found"), or one that no other item follows (a response cut short while reasoning: the API
 * rejects a reasoning item "without its required following item").
 */
export function readOutput(
  output: ResponseOutputItem[],
  store: boolean | undefined,
  freshId: () => string,
): { kept: ResponseInputItem[]; toolCalls: ToolCall[]; text: string } {
  // Empty or repeated call ids get fresh ones, in the conversation kept and in the calls returned alike.
  const calls = output.filter((item): item is ResponseFunctionToolCall => item.type === 'function_call');
  const ids = uniqueCallIds(
    calls.map((c) => c.call_id ?? ''),
    freshId,
  );
  const kept: ResponseInputItem[] = [];
  const toolCalls: ToolCall[] = [];
  let text = '';
  let refusal = '';
  output.forEach((item, index) => {
    switch (item.type) {
      case 'function_call': {
        const { conversation, call } = functionCall(item, ids[calls.indexOf(item)]!);
        kept.push(conversation);
        toolCalls.push(call);
        break;
      }
      case 'message': {
        for (const part of item.content ?? []) {
          if (part.type === 'output_text') text += part.text;
          else if (part.type === 'refusal') refusal += part.refusal;
        }
        const { id: _id, ...rest } = item;
        kept.push(store === false ? (rest as ResponseInputItem) : item);
        break;
      }
      case 'reasoning': {
        const followed = output.slice(index + 1).some((next) => next.type !== 'reasoning');
        const sendable =
          store !== false || (typeof item.encrypted_content === 'string' && item.encrypted_content !== '');
        if (followed && sendable) kept.push(item);
        break;
      }
      default:
        kept.push(item as ResponseInputItem);
    }
  });
  return { kept, toolCalls, text: text === '' ? refusal : text };
}

/**
 * The one place a `function_call` becomes a conversation item and a `ToolCall`, under the id
 * it goes by (`uniqueCallIds`), so that the conversation and the adapter see the same call.
 */
function functionCall(
  item: ResponseFunctionToolCall,
  callId: string,
): { conversation: ResponseInputItem; call: ToolCall } {
  const conversation: ResponseFunctionToolCall = {
    type: 'function_call',
    call_id: callId,
    name: item.name,
    arguments: item.arguments,
    ...(item.namespace !== undefined ? { namespace: item.namespace } : {}),
  };
  return { conversation, call: { id: callId, name: item.name, input: item.arguments } };
}
