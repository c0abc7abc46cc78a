/** How a turn ended: normally, cancelled, stopped by a budget, stopped by a stall detector (`stall`), or with an error. */
export type TurnOutcome = 'end_of_turn' | 'cancelled' | 'budget_exceeded' | 'stalled' | 'error';

/**
 * What a `runTurn` (or `resume`) call returns as `outcome`: how the turn ended, or, with an
 * approval policy, that it waits for a person (`awaiting_approval`) and has not ended.
 */
export type TurnStop = TurnOutcome | 'awaiting_approval';
