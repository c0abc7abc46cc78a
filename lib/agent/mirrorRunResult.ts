import { safeLog, type AgentLogger } from './AgentLogger';
import type { MirrorSlot } from './MirrorSlot';
import { OperationError, type TurnError } from './TurnError';
import type { TurnOutcome } from './TurnOutcome';
import type { TurnResult } from './TurnResult';
import type { UsageMeter } from './UsageMeter';

/** What a mirrored run's result is made of, at its end. */
export interface RunFacts {
  outcome: TurnOutcome;
  error: TurnError | undefined;
  turn: number;
  moves: number;
  lastText: string | undefined;
  texts: string[] | undefined;
  /** Whether tool results were left that no response carried to the LLM. */
  unsent: boolean;
  slots: readonly MirrorSlot[];
}

/**
 * The `TurnResult` of a mirrored run that ended, as the adapter's: its text when it ended its
 * turn, else the calls it left unanswered.
 */
export function mirrorRunResult(meter: UsageMeter, facts: RunFacts): TurnResult {
  const { outcome, error } = facts;
  const result = { outcome } as TurnResult;
  if (outcome === 'end_of_turn' || outcome === 'wrapped_up') result.text = facts.lastText;
  if (error !== undefined) result.error = error;
  result.usage = meter.usage;
  result.turn = facts.turn;
  result.transitions = facts.moves;
  if (facts.texts !== undefined) result.texts = facts.texts;
  if (facts.unsent && outcome !== 'end_of_turn')
    result.unansweredToolCalls = facts.slots.map((slot) => ({ call: slot.call, result: slot.result! }));
  return result;
}

/** After a run's end (its result kept): its external charges flushed off the run's path, and its end logged unless it ended its turn. */
export function reportRunEnd(meter: UsageMeter, result: TurnResult, logger: AgentLogger | undefined): void {
  const { outcome, error } = result;
  if (meter.externalDue)
    void meter.flush().then((failed) => {
      if (failed instanceof OperationError)
        safeLog(
          logger,
          'warn',
          `charging an external budget at the end of run ${result.turn} failed: ${failed.message}`,
          {
            turn: result.turn,
          },
        );
    });
  if (outcome !== 'end_of_turn' && outcome !== 'wrapped_up') {
    const message = `run ${result.turn} ended ${outcome}${error === undefined ? '' : `: ${error.message}`}`;
    safeLog(logger, outcome === 'cancelled' ? 'info' : 'warn', message, { turn: result.turn, outcome });
  }
}
