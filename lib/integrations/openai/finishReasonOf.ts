import type { Response } from 'openai/resources/responses/responses';

/** Chat Completions' names for how the model stopped, so that a history reads the same whichever API made it. */
export function finishReasonOf(response: Response, calledTools: boolean): string {
  if (response.status === 'incomplete') {
    const reason = response.incomplete_details?.reason;
    return reason === 'max_output_tokens' ? 'length' : reason === 'content_filter' ? 'content_filter' : 'incomplete';
  }
  return calledTools ? 'tool_calls' : 'stop';
}
