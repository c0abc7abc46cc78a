import type { StepMirror } from '../agent/StepMirror';
import { InvalidArgumentError } from '../machine/InvalidArgumentError';
import { observeLoop } from './observeLoop';

/** A batch task (`runBatch`'s framework task) whose run is your own loop, observed. */
export interface ObservedTask {
  id: string;
  input: string;
  drive: (mirror: StepMirror) => Promise<unknown>;
}

/**
 * One task of a batch that runs your own loop (`agent(input)`) as it is, observed as
 * `observeLoop` observes it: give it to `runBatch` or `submitBatch` with the other tasks. The
 * batch gives each run its budgets, history file, ledger and resume.
 */
export function observeTask(id: string, input: string, agent: (input: string) => unknown): ObservedTask {
  if (typeof id !== 'string' || id === '')
    throw new InvalidArgumentError('id', 'a non-empty string naming the task', id);
  if (typeof input !== 'string') throw new InvalidArgumentError('input', 'a string (the user message)', input);
  if (typeof agent !== 'function')
    throw new InvalidArgumentError('agent', "a function (input) => your loop's answer", agent);
  return { id, input, drive: async (mirror) => (await observeLoop(mirror, input, () => agent(input))).result };
}
