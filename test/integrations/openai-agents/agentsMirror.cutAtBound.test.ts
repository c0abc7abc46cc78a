// The Agents SDK's own OpenAI provider (Responses and Chat Completions) through AgentsMirror, a
// streamed run against local servers that ignore max tokens and stream ten times the output the
// request allows (../strict/fixtures/streamCut): the mirror counts the model's stream as it
// arrives and cuts the request at the agent's maxTokens.
import { Agent, OpenAIProvider, setTracingDisabled } from '@openai/agents';
import type { StepMirror } from 'agent-state-machine';
import { AgentsMirror } from '../../../lib/integrations/openai-agents';
import {
  describeMirrorCuts,
  endlessChatServer,
  endlessResponsesServer,
  MAX,
  type MirrorCase,
  type Paced,
} from '../strict/fixtures/streamCut';

setTracingDisabled(true);

/** A streamed run of an agent bounded at `MAX`, read as a UI would; the error it ended with. */
async function streamedRun(mirror: StepMirror, baseURL: string, p: Paced, useResponses: boolean): Promise<unknown> {
  const provider = new OpenAIProvider({ apiKey: 'sk-local', baseURL, useResponses });
  const sm = new AgentsMirror({ mirror, modelProvider: provider });
  // A policy that retries every failure: the cut attempt is still made once (the SDK vetoes a
  // retry once output was streamed; the mirror's retry advice says no as well).
  const retry = { maxRetries: 3, backoff: { initialDelayMs: 1 }, policy: () => true };
  const agent = new Agent({ name: 'talker', model: 'gpt-local', modelSettings: { maxTokens: MAX, retry } });
  try {
    const streamed = await sm.run(agent, 'Say tok, forever', { stream: true });
    for await (const event of streamed)
      if (event.type === 'raw_model_stream_event' && event.data.type === 'output_text_delta') p.stream.onText();
    await streamed.completed;
    return streamed.error;
  } catch (error) {
    return error;
  }
}

const cases: Record<string, MirrorCase> = {
  'AgentsMirror, a streamed run through the Responses API': {
    server: endlessResponsesServer,
    drive: (mirror, baseURL, p) => streamedRun(mirror, baseURL, p, true),
  },
  'AgentsMirror, a streamed run through the Chat Completions API': {
    server: endlessChatServer,
    drive: (mirror, baseURL, p) => streamedRun(mirror, baseURL, p, false),
  },
};

describeMirrorCuts(cases);
