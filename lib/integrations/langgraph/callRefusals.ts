import { OperationError, TurnCancelledError, type StepMirror } from 'agent-state-machine';
import type { LangGraphObserve } from './LangGraphMirrorOptions';

/**
 * Why a call heard outside `lg.run()` is refused while the mirror observes only what it wrapped
 * (no run bounds it), or undefined when it is heard where a run can take it.
 */
export function outsideRunError(observe: LangGraphObserve, inRun: boolean): Error | undefined {
  if (observe !== 'wrapped' || inRun) return undefined;
  return new OperationError(
    'a LangGraph call outside lg.run()',
    new Error(
      "observing 'wrapped', the mirror starts and ends a run only in lg.run(graph, input, config): invoke the graph through it",
    ),
  );
}

/** Why a call after the run's end is refused: how the run ended. */
export function runEndedError(mirror: StepMirror): Error {
  const result = mirror.result;
  return (
    result?.error ??
    new TurnCancelledError(`run ${mirror.turn} has ended (${result?.outcome ?? 'not started'})`, mirror.machine.current)
  );
}
