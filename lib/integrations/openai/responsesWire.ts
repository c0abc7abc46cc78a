import type { Response, ResponseStreamEvent } from 'openai/resources/responses/responses';
import type { LLMResponse, WireFormat } from 'agent-state-machine';
import { requestTokenBound } from '../../internal/requestTokenBound';
import { collectStream } from './collectStream';
import { finishReasonOf } from './finishReasonOf';
import { mapResponsesUsage } from './mapResponsesUsage';
import { readOutput } from './readOutput';
import { wireMaxTokens } from './wireMaxTokens';

/** Tools the server runs and bills per call, with no `max_uses` in the Responses API: a request that declares one has no bound. */
const SERVER_TOOLS = /^(web_search|file_search|code_interpreter|image_generation)/;

/**
 * The Responses API on the wire (`POST …/responses`), for `meterFetch`: a request's bound from
 * its body (`max_output_tokens`; a server tool, billed per call with no cap on its calls,
 * leaves it unbounded), the answer read as the ready-made loop reads it, and a recorded answer
 * served as a response.
 */
export const responsesWire: WireFormat = {
  name: 'OpenAI Responses',
  matches: (url) => url.pathname.endsWith('/responses'),
  bound(body) {
    const max = wireMaxTokens(body, ['max_output_tokens']);
    if (typeof max === 'string') return max;
    const tools = Array.isArray(body.tools) ? (body.tools as { type?: unknown }[]) : [];
    const server = tools.find((t) => typeof t?.type === 'string' && SERVER_TOOLS.test(t.type));
    if (server !== undefined)
      return `it declares the server tool ${String(server.type)}, which the Responses API bills per call with no max_uses, so its cost has no bound`;
    const items = Array.isArray(body.input) ? body.input.length : 1;
    return {
      inputTokens: requestTokenBound(body, items, tools.length),
      maxOutputTokens: max,
      ...(typeof body.model === 'string' ? { model: body.model } : {}),
    };
  },
  read(json) {
    const answer = json as Response;
    if (!Array.isArray(answer.output)) throw new Error('the response has no output array');
    let fresh = 0;
    const { toolCalls, text } = readOutput(
      answer.output,
      (answer as { store?: boolean }).store,
      () => `call_wire_${++fresh}`,
    );
    const response: LLMResponse = {
      text,
      usage: mapResponsesUsage(answer.usage, answer.output),
      model: answer.model,
      finishReason: finishReasonOf(answer, toolCalls.length > 0),
    };
    if (toolCalls.length > 0) response.toolCalls = toolCalls;
    return response;
  },
  stream: {
    collect: (events, watch) => collectStream(events as AsyncIterable<ResponseStreamEvent>, () => undefined, watch),
    serve(response, body) {
      const whole = responsesWire.serve(response, body) as Response;
      const text = response.text ?? '';
      return [
        { type: 'response.created', sequence_number: 0, response: { ...whole, status: 'in_progress', output: [] } },
        ...(text === ''
          ? []
          : [
              {
                type: 'response.output_text.delta',
                sequence_number: 1,
                item_id: 'msg_journal',
                output_index: 0,
                content_index: 0,
                delta: text,
                logprobs: [],
              },
            ]),
        { type: 'response.completed', sequence_number: 2, response: whole },
      ];
    },
  },
  serve(response, body) {
    const usage = response.usage;
    const text = response.text ?? '';
    return {
      id: 'resp_journal',
      object: 'response',
      created_at: 0,
      status: 'completed',
      model: response.model ?? body.model ?? '',
      output: [
        ...(text === ''
          ? []
          : [
              {
                type: 'message',
                id: 'msg_journal',
                role: 'assistant',
                status: 'completed',
                content: [{ type: 'output_text', text, annotations: [] }],
              },
            ]),
        ...(response.toolCalls ?? []).map((c) => ({
          type: 'function_call',
          id: `fc_${c.id}`,
          call_id: c.id,
          name: c.name,
          arguments: typeof c.input === 'string' ? c.input : JSON.stringify(c.input ?? {}),
          status: 'completed',
        })),
      ],
      ...(usage?.inputTokens !== undefined &&
        usage.outputTokens !== undefined && {
          usage: {
            input_tokens: usage.inputTokens,
            output_tokens: usage.outputTokens,
            total_tokens: usage.inputTokens + usage.outputTokens,
          },
        }),
    };
  },
};
