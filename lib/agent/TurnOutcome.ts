/** How a turn ended: normally, cancelled, stopped by a budget, or with an error. */
export type TurnOutcome = 'end_of_turn' | 'cancelled' | 'budget_exceeded' | 'error';
