import { InvalidArgumentError } from './InvalidArgumentError';

/**
 * A batch's task list, read once and copied (a generator is read once; an array the caller
 * reuses changes nothing), each task an object whose `id` is a non-empty string no other task
 * has. `shape` names a task in the messages (`{ id, input, agent }`). Each task's own fields
 * are the caller's to check, with `task(record, index)`.
 */
export function checkTaskList<T>(
  tasks: unknown,
  shape: { list: string; item: string },
  task: (record: Record<string, unknown>, index: number) => T,
): T[] {
  const iterable =
    typeof tasks === 'object' && tasks !== null && typeof (tasks as Iterable<unknown>)[Symbol.iterator] === 'function';
  if (!iterable) throw new InvalidArgumentError('tasks', `an array or iterable of ${shape.list}`, tasks);
  const seen = new Map<string, number>();
  return Array.from(tasks as Iterable<unknown>, (value, i) => {
    if (typeof value !== 'object' || value === null)
      throw new InvalidArgumentError(`tasks[${i}]`, `an object ${shape.item}`, value);
    const record = value as Record<string, unknown>;
    const { id } = record;
    if (typeof id !== 'string' || id === '') throw new InvalidArgumentError(`tasks[${i}].id`, 'a non-empty string', id);
    const first = seen.get(id);
    if (first !== undefined)
      throw new InvalidArgumentError(`tasks[${i}].id`, `unique (\`tasks[${first}].id\` is the same)`, id);
    seen.set(id, i);
    return task(record, i);
  });
}
