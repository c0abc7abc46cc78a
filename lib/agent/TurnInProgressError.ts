import { StateMachineError } from '../machine/StateMachineError';

/** `runTurn` was called while another turn of the same agent was still running. */
export class TurnInProgressError extends StateMachineError {
  readonly code = 'turn_in_progress' as const;
  constructor(
    readonly turn: number,
    readonly state: string,
  ) {
    super(`runTurn() called while turn ${turn} is still running (in ${state}); await it or cancel() it first`);
  }
}
