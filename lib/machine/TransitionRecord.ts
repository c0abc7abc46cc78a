import type { StateName } from '../../states/StateName';

/** One move, as kept in history, handed to listeners and written to sinks. */
export interface TransitionRecord<S extends string = StateName> {
  /** 1 for the machine's first move, then +1 per move (resets do not restart it). */
  readonly seq: number;
  readonly from: S;
  readonly to: S;
  /** Why the move happened, in words (for a forced move: the reason). */
  readonly description: string;
  /** Whatever the caller attached: tool name, call id, attempt, usage, error message. */
  readonly data?: unknown;
  /** When the move took effect, epoch milliseconds by the machine's clock. */
  readonly at: number;
  /** Time spent in `from`, in milliseconds; never negative, even if the clock went back. */
  readonly durationMs: number;
  /** True when the move bypassed the table (`forceTransition`). */
  readonly forced: boolean;
}

/** How a forced move is logged: `'warn'` (default: a path the table cannot express is news) or `'info'` (one the caller expects, such as an ordinary cancel). */
export type ForcedLogLevel = 'warn' | 'info';

/**
 * What a move may be described with: a description, or a description with data. `logLevel`
 * counts only for a forced move; it is not part of the record.
 */
export type TransitionEvent =
  string | { readonly description: string; readonly data?: unknown; readonly logLevel?: ForcedLogLevel };
