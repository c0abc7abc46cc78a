import OpenAI from 'openai';
import { AgentWithStateMachine, UnboundedCallsError, type AgentLoop, type Pricing } from 'agent-state-machine';
import { fromOpenAIChat, fromOpenAIResponses } from '../../../lib/integrations/openai';

// Which ready-made OpenAI loops a dollar cap (strict by default) takes, decided when the adapter
// is made: a loop whose requests cannot be bounded is refused before any request.
const client = new OpenAI({ apiKey: 'sk-local', baseURL: 'http://127.0.0.1:9/v1' });
const pricing: Pricing = (u) => ((u.inputTokens ?? 0) + (u.outputTokens ?? 0)) * 1e-6;
const adapt = (loop: AgentLoop) =>
  new AgentWithStateMachine(loop, { logger: false, pricing, budget: { maxCostUsd: 1 } });

describe('ready-made OpenAI loops under a strict dollar cap', () => {
  it('takes a loop whose requests name their max output tokens, by the option or in request', () => {
    expect(() => adapt(fromOpenAIChat(client, { model: 'm', maxTokens: 100 }))).not.toThrow();
    expect(() => adapt(fromOpenAIChat(client, { model: 'm', request: { max_tokens: 100 } }))).not.toThrow();
    expect(() => adapt(fromOpenAIChat(client, { model: 'm', request: { max_completion_tokens: 100 } }))).not.toThrow();
    expect(() => adapt(fromOpenAIResponses(client, { model: 'm', maxTokens: 100 }))).not.toThrow();
    expect(() => adapt(fromOpenAIResponses(client, { model: 'm', request: { max_output_tokens: 100 } }))).not.toThrow();
  });

  it('refuses one that asks for no max output tokens, naming the option', () => {
    for (const loop of [fromOpenAIChat(client, { model: 'm' }), fromOpenAIResponses(client, { model: 'm' })])
      expect(() => adapt(loop)).toThrow(
        /^budget\.maxCostUsd is a strict cap .*sets no max output tokens, so a call's output \(and its cost\) has no bound: give `maxTokens` on the loop, or set `strict: false`/,
      );
    expect(() => adapt(fromOpenAIChat(client, { model: 'm' }))).toThrow(UnboundedCallsError);
    // strict: false takes them, with the overshoot it accepts.
    expect(
      () =>
        new AgentWithStateMachine(fromOpenAIChat(client, { model: 'm' }), {
          logger: false,
          budget: { maxCostUsd: 1, strict: false },
        }),
    ).not.toThrow();
  });
});
