import type { MirrorStop } from '../agent/mirror/MirrorStop';

/**
 * What a refused request answers the SDK: a 400 (retried by no SDK) with `x-should-retry: false`
 * (the `openai` and Anthropic clients' own signal), whose error names the reason. The request is
 * never sent. `observeLoop` turns the SDK's error back into the run's end.
 */
export function stopResponse(stop: MirrorStop): Response {
  const body = {
    type: 'error',
    error: { type: 'agent_state_machine_stop', code: stop.code, message: `agent-state-machine: ${stop.message}` },
  };
  return new Response(JSON.stringify(body), {
    status: 400,
    headers: { 'content-type': 'application/json', 'x-should-retry': 'false' },
  });
}
