import { assertBoundsCalls } from '../../agent/options/assertBoundsCalls';
import type { BudgetLimits } from '../../agent/BudgetLimits';
import { isStrictCap } from '../../agent/money/isStrictCap';
import type { AgentTask } from './runTask';
import { isFrameworkTask } from './checkBatchTasks';
import type { FrameworkTask } from './runFrameworkTask';

/**
 * Under a strict `perRun` or `total` dollar cap (the default beside `maxCostUsd`), refuses the
 * batch before any run starts when a task's loop cannot bound its calls (with `compact`, those
 * of its compaction too). Only loops given as
 * they are can be checked here: a factory's loop is checked when its run starts (the run ends
 * in Error with the same words), and a framework's calls when each starts.
 */
export function assertTasksBoundCalls(
  tasks: ReadonlyArray<AgentTask | FrameworkTask>,
  perRun: BudgetLimits | undefined,
  total: BudgetLimits | undefined,
  compact = false,
): void {
  const cap = isStrictCap(perRun) ? 'perRun.maxCostUsd' : isStrictCap(total) ? 'total.maxCostUsd' : undefined;
  if (cap === undefined) return;
  tasks.forEach((task, i) => {
    if (isFrameworkTask(task) || typeof task.agent === 'function') return;
    assertBoundsCalls(task.agent, cap, `tasks[${i}].agent`, compact);
  });
}
