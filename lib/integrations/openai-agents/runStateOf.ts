import { RunState, type Agent, type AgentInputItem } from '@openai/agents';

/** The SDK's state of a run of any agent and context. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a mirror wraps every agent of a run
export type AnyState = RunState<any, Agent<any, any>>;

/** The state each error a mirrored run stopped with leaves to resume from. */
const STATES = new WeakMap<object, AnyState>();

/** The SDK's `RunState` of a run that `AgentsMirror.run()` stopped with `error`: resume with `run(agent, state)`. */
export function runStateOf(error: unknown): AnyState | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  return (
    STATES.get(error) ??
    ((error as { state?: unknown }).state instanceof RunState ? (error as { state: AnyState }).state : undefined)
  );
}

/** `error`, with the run's `state` kept for `runStateOf` (a state given as input is no run's state). */
export function withState(error: unknown, state: AnyState | string | AgentInputItem[]): unknown {
  if (state instanceof RunState && typeof error === 'object' && error !== null && !STATES.has(error))
    STATES.set(error, state);
  return error;
}
