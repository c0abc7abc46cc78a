import {
  RunContext,
  RunState,
  type Agent,
  type AgentInputItem,
  type NonStreamRunOptions,
  type StreamRunOptions,
} from '@openai/agents';
import { InvalidArgumentError } from 'agent-state-machine';
import type { AnyState } from './runStateOf';

/* eslint-disable @typescript-eslint/no-explicit-any -- any context and output type: a mirror wraps every agent of a run */
type AnyAgent = Agent<any, any>;
type AnyOptions = NonStreamRunOptions<any> | StreamRunOptions<any>;
/* eslint-enable @typescript-eslint/no-explicit-any */

// The SDK's DEFAULT_MAX_TURNS, which it does not export: a RunState made here must start with the same cap.
const DEFAULT_MAX_TURNS = 10;

/**
 * The RunState the SDK runs `agent` (wrapped) on, made here so that it is at hand when the run
 * stops; a given state runs on the wrapped agent (`wrap`). Not with a `session` or a server-kept
 * conversation: the SDK prepares those from a fresh input only, so the input goes through as it
 * is (and a stop keeps only the state the SDK attaches itself).
 */
export function stateForRun(
  agent: AnyAgent,
  input: string | AgentInputItem[] | AnyState,
  options: AnyOptions,
  wrap: (agent: AnyAgent) => AnyAgent,
): AnyState | string | AgentInputItem[] {
  if (input instanceof RunState) {
    // A state read back with RunState.fromString(original, …) names the unwrapped agent.
    const current = input.currentAgent as AnyAgent;
    const wrapped = wrap(current);
    if (wrapped !== current) input.setCurrentAgent(wrapped);
    return input;
  }
  if (typeof input !== 'string' && !Array.isArray(input))
    throw new InvalidArgumentError('input', 'a string, an array of input items or a RunState', input);
  if (options.session !== undefined || options.conversationId !== undefined || options.previousResponseId !== undefined)
    return input;
  const context = options.context instanceof RunContext ? options.context : new RunContext(options.context);
  return new RunState(context, input, agent, options.maxTurns ?? DEFAULT_MAX_TURNS);
}
