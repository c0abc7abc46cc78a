import { safeLog, type AgentLogger } from '../AgentLogger';
import { OperationError } from '../TurnError';
import type { TurnResult } from '../TurnResult';
import type { UsageMeter } from '../money/UsageMeter';

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
