import type { Response } from 'openai/resources/responses/responses';
import { mapResponsesUsage } from './mapResponsesUsage';
import { OpenAIResponseError } from './OpenAIResponseError';

/**
 * The output items that ask the client to act, other than `function_call`, and what to do
 * instead. The loop runs function calls only: answering these needs an executor it does not
 * have (a shell, a patch applier, a computer harness, an approval), and a custom tool takes
 * free text where the loop's tools take JSON arguments.
 */
const REMEDIES: Readonly<Record<string, string>> = {
  shell_call:
    'offer a function tool in `tools` that runs commands, instead of the shell tool in `request.tools`, or run the shell loop yourself',
  local_shell_call:
    'offer a function tool in `tools` that runs commands, instead of the local_shell tool in `request.tools`, or run the shell loop yourself',
  apply_patch_call:
    'offer a function tool in `tools` that applies a patch, instead of the apply_patch tool in `request.tools`, or run the patch loop yourself',
  custom_tool_call:
    'give the tool in `tools` (the loop sends it as a function tool with JSON arguments), instead of a custom tool in `request.tools`',
  computer_call:
    'computer use needs a harness that performs the action and sends back a screenshot: run that loop yourself, without fromOpenAIResponses',
  mcp_approval_request:
    "set `require_approval: 'never'` on the MCP tool in `request.tools` for the tools the LLM may call unasked, or answer the approval request yourself",
};

/**
 * Throws when the response asks the client for an action the loop cannot take, naming each
 * such item (its type, id, call id and name) and what to do; an answer that ended the turn
 * with empty text instead would lose the request silently.
 */
export function refuseClientActions(response: Response): void {
  const asked = (response.output ?? []).filter((item) => Object.hasOwn(REMEDIES, item.type));
  if (asked.length === 0) return;
  const named = asked.map((item) => {
    const i = item as { type: string; id?: string; call_id?: string; name?: string; server_label?: string };
    const parts = [
      `id ${i.id ?? '(none)'}`,
      ...(i.call_id !== undefined ? [`call_id ${i.call_id}`] : []),
      ...(i.name !== undefined ? [`name ${i.server_label !== undefined ? `${i.server_label}.` : ''}${i.name}`] : []),
    ];
    return `a ${i.type} item (${parts.join(', ')}): ${REMEDIES[i.type]}`;
  });
  throw new OpenAIResponseError(
    `the response ${response.id} asks the client for ${asked.length === 1 ? 'an action' : `${asked.length} actions`} fromOpenAIResponses does not take (it runs function_call items only): ${named.join('; ')}`,
    {
      code: 'unsupported_client_action',
      responseId: response.id,
      // Answered, so billed: the attempt is charged at the answer's usage (at its hold when it reported none).
      answeredUsage: mapResponsesUsage(response.usage, response.output ?? []) ?? {},
      model: response.model,
    },
  );
}
