import type { TurnOutcome } from '../internal/turnOutcomes';

// The outcomes themselves live in internal/, with their one list, which history files are read by.
export type { TurnOutcome };

/**
 * What a `runTurn` (or `resume`) call returns as `outcome`: how the turn ended, or, with an
 * approval policy, that it waits for a person (`awaiting_approval`), or, under a shared cap
 * made with `whenSpent: 'pause'`, that its next call did not fit and it waits for a raise
 * (`awaiting_budget`); a paused turn has not ended.
 */
export type TurnStop = TurnOutcome | 'awaiting_approval' | 'awaiting_budget';
