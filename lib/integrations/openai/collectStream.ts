import type { Response, ResponseStreamEvent } from 'openai/resources/responses/responses';
import type { OutputBoundWatch } from 'agent-state-machine';
import { errorEventError, failedResponseError, OpenAIResponseError } from './OpenAIResponseError';

/**
 * Folds the SDK's event stream into the response it stands for: text deltas go to `onText`,
 * every output delta to `watch` (which cuts the request at its max output tokens),
 * `response.completed` (or `response.incomplete`) carries the response. `response.failed` and
 * an `error` event are errors; a stream that ends before the response finished was dropped:
 * an error too (so the attempt is retried), never a short answer.
 */
export async function collectStream(
  events: AsyncIterable<ResponseStreamEvent>,
  onText: (delta: string) => void,
  watch: OutputBoundWatch,
): Promise<Response> {
  let final: Response | undefined;
  let responseId: string | undefined;
  try {
    for await (const event of events) {
      if (final !== undefined) continue;
      switch (event.type) {
        case 'response.created':
        case 'response.in_progress':
          responseId = event.response.id;
          break;
        case 'response.output_text.delta':
          onText(event.delta);
          watch.add(event.delta);
          break;
        // Output too, counted against the request's max output tokens.
        case 'response.refusal.delta':
        case 'response.function_call_arguments.delta':
        case 'response.reasoning_text.delta':
        case 'response.reasoning_summary_text.delta':
          watch.add(event.delta);
          break;
        case 'response.completed':
        case 'response.incomplete':
          final = event.response;
          break;
        case 'response.failed':
          throw failedResponseError(event.response);
        case 'error':
          throw errorEventError(event, responseId);
      }
    }
  } catch (error) {
    // The API nests an `error` event's fields under `error`, which the SDK throws as an
    // APIError without a status: give it the code's status, as for the documented form.
    const e = error as { status?: unknown; error?: unknown } | null;
    if (
      !(error instanceof OpenAIResponseError) &&
      typeof e === 'object' &&
      e !== null &&
      e.status === undefined &&
      typeof (e.error as { message?: unknown } | null)?.message === 'string'
    ) {
      throw errorEventError(e.error as object, responseId, error);
    }
    throw error;
  }
  if (final === undefined) {
    // The SDK ends an aborted stream quietly: say it was aborted, not dropped.
    watch.signal.throwIfAborted();
    throw new Error(
      `the response stream ended before response.completed${responseId !== undefined ? ` (response ${responseId})` : ''}: the connection was dropped`,
    );
  }
  return final;
}
