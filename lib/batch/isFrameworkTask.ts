import type { FrameworkTask } from './runFrameworkTask';

/** Whether `task` is a framework's (it gives `run(mirror)`), not an agent loop's. */
export function isFrameworkTask(task: unknown): task is FrameworkTask {
  return typeof task === 'object' && task !== null && typeof (task as { run?: unknown }).run === 'function';
}
