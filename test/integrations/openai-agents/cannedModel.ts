// An Agents SDK `Model` that answers from a script: each step a response (text, function calls,
// tokens) or an error, streamed or not. It records what it was asked, so tests can say which
// calls were made — and which were not.
import { Usage, type Model, type ModelRequest, type ModelResponse, type StreamEvent } from '@openai/agents';

export type CannedStep =
  | {
      text?: string;
      calls?: { id: string; name: string; args?: unknown }[];
      inputTokens?: number;
      outputTokens?: number;
    }
  | { error: Error };

export interface CannedModel extends Model {
  readonly requests: ModelRequest[];
  /** Steps not yet answered. */
  readonly left: number;
}

export function cannedModel(steps: CannedStep[]): CannedModel {
  const queue = [...steps];
  const requests: ModelRequest[] = [];
  const next = (request: ModelRequest): ModelResponse => {
    requests.push(request);
    const step = queue.shift();
    if (step === undefined) throw new Error(`canned model: no step left for call ${requests.length}`);
    if ('error' in step) throw step.error;
    const output: ModelResponse['output'] = [];
    for (const c of step.calls ?? [])
      output.push({
        type: 'function_call',
        callId: c.id,
        id: `fc_${c.id}`,
        name: c.name,
        arguments: JSON.stringify(c.args ?? {}),
        status: 'completed',
      });
    if (step.text !== undefined)
      output.push({
        type: 'message',
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: step.text }],
      });
    const inputTokens = step.inputTokens ?? 100;
    const outputTokens = step.outputTokens ?? 10;
    return {
      output,
      usage: new Usage({ requests: 1, inputTokens, outputTokens, totalTokens: inputTokens + outputTokens }),
      responseId: `resp_${requests.length}`,
    };
  };
  return {
    requests,
    get left() {
      return queue.length;
    },
    async getResponse(request) {
      return next(request);
    },
    async *getStreamedResponse(request): AsyncIterable<StreamEvent> {
      const response = next(request);
      yield { type: 'response_started' };
      for (const item of response.output)
        if (item.type === 'message' && item.role === 'assistant')
          for (const part of item.content)
            if (part.type === 'output_text') yield { type: 'output_text_delta', delta: part.text };
      yield {
        type: 'response_done',
        response: {
          id: response.responseId!,
          usage: {
            requests: 1,
            inputTokens: response.usage.inputTokens,
            outputTokens: response.usage.outputTokens,
            totalTokens: response.usage.totalTokens,
          },
          output: response.output,
        },
      } as StreamEvent;
    },
  };
}
