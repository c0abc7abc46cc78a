/**
 * How a turn ended: normally, cancelled, stopped by a budget, stopped by a stall detector
 * (`stall`), with an error, or with the model's answer to a final call made within the cap
 * (`budget.wrapUp`: `wrapped_up`).
 */
export type TurnOutcome = 'end_of_turn' | 'wrapped_up' | 'cancelled' | 'budget_exceeded' | 'stalled' | 'error';

/**
 * What a `runTurn` (or `resume`) call returns as `outcome`: how the turn ended, or, with an
 * approval policy, that it waits for a person (`awaiting_approval`), or, under a shared cap
 * made with `whenSpent: 'pause'`, that its next call did not fit and it waits for a raise
 * (`awaiting_budget`); a paused turn has not ended.
 */
export type TurnStop = TurnOutcome | 'awaiting_approval' | 'awaiting_budget';
