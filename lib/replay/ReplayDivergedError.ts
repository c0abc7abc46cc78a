import { StateMachineError } from '../machine/StateMachineError';

/** A replay asked for something the journal did not record: the run took another path. */
export class ReplayDivergedError extends StateMachineError {
  readonly code = 'replay_diverged' as const;
  constructor(
    /** 1 for the first LLM call of the run. */
    readonly llmCall: number,
    /** What differed, in words. */
    readonly difference: string,
  ) {
    super(`diverged at LLM call ${llmCall}: ${difference}`);
  }
}
