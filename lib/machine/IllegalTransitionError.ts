import { StateMachineError } from './StateMachineError';

/**
 * A move the transition table does not allow. The machine did not change; the error carries
 * what a caller needs to act on it: where it was, where it was asked to go, where it could go.
 */
export class IllegalTransitionError<S extends string = string> extends StateMachineError {
  readonly code = 'illegal_transition' as const;

  constructor(
    readonly from: S,
    readonly to: S,
    /** The states `from` may move to. */
    readonly allowed: readonly S[],
    /** The description of the move that was asked for. */
    readonly description: string = '',
    /** When it was asked for, in epoch milliseconds by the machine's clock. */
    readonly at: number = Date.now(),
  ) {
    super(
      `Illegal transition ${from} → ${to}${description ? ` (${JSON.stringify(description)})` : ''}: ` +
        `${from} may only move to ${allowed.length > 0 ? allowed.join(', ') : 'nothing'}`,
    );
  }

  /** A plain object for logs and history files (Error fields do not survive JSON.stringify). */
  toJSON(): { code: 'illegal_transition'; from: S; to: S; allowed: readonly S[]; description: string; at: number } {
    return {
      code: this.code,
      from: this.from,
      to: this.to,
      allowed: this.allowed,
      description: this.description,
      at: this.at,
    };
  }
}
