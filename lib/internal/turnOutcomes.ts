/**
 * How a turn ended: normally, cancelled, stopped by a budget, stopped by a stall detector
 * (`stall`), with an error, or with the model's answer to a final call made within the cap
 * (`budget.wrapUp`: `wrapped_up`).
 */
export type TurnOutcome = 'end_of_turn' | 'wrapped_up' | 'cancelled' | 'budget_exceeded' | 'stalled' | 'error';

/**
 * Every `TurnOutcome`, in the order reports list them: the one list the adapter's results, a
 * history file's terminal records and the reports read (test/history/turnOutcomeOf.test.ts
 * pins that it names each outcome).
 */
export const TURN_OUTCOMES: readonly TurnOutcome[] = [
  'end_of_turn',
  'wrapped_up',
  'budget_exceeded',
  'stalled',
  'error',
  'cancelled',
];
