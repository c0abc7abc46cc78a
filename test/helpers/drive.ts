import {
  AgentWithStateMachine,
  createScriptedAgent,
  type AgentScript,
  type AgentWithStateMachineOptions,
  type IllegalTransitionError,
  type ScriptedAgent,
} from '../../lib/index';
import { manualClock } from './manualClock';

export interface Driven {
  adapter: AgentWithStateMachine;
  agent: ScriptedAgent;
  clock: ReturnType<typeof manualClock>;
  /** Every rejected move; the adapter must never cause one. */
  rejected: IllegalTransitionError[];
  /** Waits the adapter asked for (backoff, grace), in ms. */
  sleeps: number[];
  /** The states entered since `mark()`, forced ones suffixed with `!`. */
  path: () => string[];
  mark: () => void;
}

/** A scripted agent wrapped in an adapter with an injected clock and a sleep that does not wait. */
export function drive(script: AgentScript, options: AgentWithStateMachineOptions = {}): Driven {
  const clock = manualClock();
  const sleeps: number[] = [];
  const agent = createScriptedAgent({ sleep: async () => undefined, ...script });
  const adapter = new AgentWithStateMachine(agent, {
    clock: clock.now,
    logger: false,
    maxHistorySize: Infinity,
    random: () => 0.5,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    ...options,
  });
  const rejected: IllegalTransitionError[] = [];
  adapter.machine.on('rejected', (e) => rejected.push(e));
  let from = 0;
  return {
    adapter,
    agent,
    clock,
    rejected,
    sleeps,
    path: () =>
      adapter.machine
        .history()
        .slice(from)
        .map((r) => `${r.to}${r.forced ? '!' : ''}`),
    mark: () => {
      from = adapter.machine.history().length;
    },
  };
}
