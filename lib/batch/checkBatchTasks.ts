import { InvalidArgumentError } from '../machine/InvalidArgumentError';
import type { BatchTask } from './BatchOptions';
import { isFrameworkTask } from './isFrameworkTask';
import type { FrameworkTask } from './runFrameworkTask';

/**
 * A batch's tasks checked and copied once, at `runBatch`'s call and before its code loads: a
 * generator is read once, an array the caller reuses changes nothing, and ids are known to be
 * unique before anything runs.
 */
export function checkBatchTasks(tasks: unknown): Array<BatchTask | FrameworkTask> {
  const iterable =
    typeof tasks === 'object' && tasks !== null && typeof (tasks as Iterable<unknown>)[Symbol.iterator] === 'function';
  if (!iterable) throw new InvalidArgumentError('tasks', 'an array or iterable of { id, input, agent }', tasks);
  const list = Array.from(tasks as Iterable<unknown>);
  const seen = new Map<string, number>();
  list.forEach((task, i) => {
    if (typeof task !== 'object' || task === null)
      throw new InvalidArgumentError(`tasks[${i}]`, 'an object { id, input, agent } or { id, input?, run }', task);
    const { id, input, agent } = task as Record<string, unknown>;
    if (typeof id !== 'string' || id === '') throw new InvalidArgumentError(`tasks[${i}].id`, 'a non-empty string', id);
    const first = seen.get(id);
    if (first !== undefined)
      throw new InvalidArgumentError(`tasks[${i}].id`, `unique (\`tasks[${first}].id\` is the same)`, id);
    seen.set(id, i);
    if (isFrameworkTask(task)) {
      if (input !== undefined && typeof input !== 'string')
        throw new InvalidArgumentError(`tasks[${i}].input`, 'a string (the user message) or undefined', input);
      return;
    }
    if (typeof input !== 'string')
      throw new InvalidArgumentError(`tasks[${i}].input`, 'a string (the user message)', input);
    if (!((typeof agent === 'object' && agent !== null) || typeof agent === 'function')) {
      throw new InvalidArgumentError(
        `tasks[${i}].agent`,
        'an AgentLoop or a function returning one (or give `run(mirror)` for a framework loop)',
        agent,
      );
    }
  });
  return list as Array<BatchTask | FrameworkTask>;
}
