import type { RunReport } from './BatchReport';
import type { TaskState } from './resume/resumeState';

/**
 * The report row of a task whose run ended before this resume: what its file says, the run not
 * run again, with the reasons of its uncertain and unpriced money. Its failure is in the words
 * of the run's error when it ran (its class is not recorded).
 */
export function finishedRunReport(id: string, state: Extract<TaskState, { kind: 'finished' }>): RunReport {
  const { outcome, usage, transitions, file, reason, durationMs, uncertain, unpriced } = state;
  return {
    id,
    outcome,
    usage,
    durationMs,
    transitions,
    historyFile: file,
    resumed: 'finished',
    ...(state.salvaged === undefined ? {} : { salvaged: state.salvaged }),
    ...(uncertain === undefined ? {} : { uncertain }),
    ...(unpriced === undefined ? {} : { unpriced }),
    ...(reason === undefined ? {} : { error: new Error(reason) }),
  };
}
