import type { Response } from 'openai/resources/responses/responses';
import { failedResponseError, OpenAIResponseError } from './OpenAIResponseError';

/** `completed` and `incomplete` carry an answer; `failed` and anything else is an error. */
export function assertUsable(response: Response): void {
  const status = response.status;
  // Some compatible servers leave `status` out of a finished response.
  if (status === undefined || status === null || status === 'completed' || status === 'incomplete') return;
  if (status === 'failed') throw failedResponseError(response);
  throw new OpenAIResponseError(
    `the response ${response.id} has status '${String(status)}', not completed: the loop needs the answer in the response (no background mode)`,
    { responseId: response.id },
  );
}
