import { checkTaskList } from '../../machine/checkTaskList';
import { InvalidArgumentError } from '../../machine/InvalidArgumentError';
import type { FrameworkTask } from './runFrameworkTask';

/**
 * A batch's tasks checked and copied once, at `runBatch`'s call and before its code loads: a
 * generator is read once, an array the caller reuses changes nothing, and ids are known to be
 * unique before anything runs. `T`: the task types the caller gives.
 */
export function checkBatchTasks<T extends object>(tasks: Iterable<T>): T[] {
  const shape = { list: '{ id, input, agent }', item: '{ id, input, agent } or { id, input?, drive }' };
  return checkTaskList(tasks, shape, (task, i) => {
    const { input, agent } = task;
    assertNoRun(task, `tasks[${i}]`);
    if (isFrameworkTask(task)) {
      if (input !== undefined && typeof input !== 'string')
        throw new InvalidArgumentError(`tasks[${i}].input`, 'a string (the user message) or undefined', input);
      return task as T;
    }
    if (typeof input !== 'string')
      throw new InvalidArgumentError(`tasks[${i}].input`, 'a string (the user message)', input);
    if (!((typeof agent === 'object' && agent !== null) || typeof agent === 'function'))
      throw new InvalidArgumentError(
        `tasks[${i}].agent`,
        'an AgentLoop or a function returning one (or give `drive(mirror)` for a framework loop)',
        agent,
      );
    return task as T;
  });
}

/** Whether `task` is a framework's (it gives `drive(mirror)`), not an agent loop's. */
export function isFrameworkTask(task: unknown): task is FrameworkTask {
  return typeof task === 'object' && task !== null && typeof (task as { drive?: unknown }).drive === 'function';
}

/** A task that still gives a framework's loop as `run`, its name before `drive`: refused by name, never taken for an agent task. */
export function assertNoRun(task: object, where: string): void {
  if (typeof (task as { run?: unknown }).run === 'function')
    throw new InvalidArgumentError(
      `${where}.run`,
      'left out: a framework task gives its loop as `drive(mirror)` (`run` is now `drive`)',
      (task as { run?: unknown }).run,
    );
}
