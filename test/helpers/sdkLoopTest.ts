import {
  AgentWithStateMachine,
  type AgentLoop,
  type AgentWithStateMachineOptions,
  type Sleep,
} from 'agent-state-machine';

/** The tool every SDK loop's tests offer: it reads a "file" by path. */
export const readFile = {
  description: 'Reads a file',
  parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  run: async (input: { path: string }) => `contents of ${input.path}`,
};

/** A sleep that records what the adapter asked for and does not wait. */
export function recordingSleep(): Sleep & { delays: number[] } {
  const delays: number[] = [];
  const sleep = (async (ms: number) => {
    delays.push(ms);
  }) as Sleep & { delays: number[] };
  sleep.delays = delays;
  return sleep;
}

/** An SDK loop in an adapter that logs nothing and does not really wait. */
export function agentOf(loop: AgentLoop, options: AgentWithStateMachineOptions = {}): AgentWithStateMachine {
  return new AgentWithStateMachine(loop, { logger: false, sleep: recordingSleep(), ...options });
}
