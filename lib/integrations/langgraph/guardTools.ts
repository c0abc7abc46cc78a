// '/web', as LangGraphApprovals' Command: the main entry's AsyncLocalStorage set-up is not this module's to make.
import { interrupt } from '@langchain/langgraph/web';
import type { MirrorApprovals } from 'agent-state-machine';

type ToolCallFn = (arg: unknown, runManager?: { runId?: string }, config?: { toolCall?: { id?: string } }) => unknown;

/**
 * Marks what the guard made: a guarded tool's metadata (`handleToolStart` hears it), and the
 * value of the guard's interrupt (answered with the default resume value, which the guard reads).
 */
export const GUARD_MARK = 'agent_sm_approve';

/** Whether a tool run's metadata, or an interrupt's value, is the guard's. */
export function isGuarded(value: unknown): boolean {
  return (value as Record<string, unknown> | null | undefined)?.[GUARD_MARK] === true;
}

/**
 * The mirror's `approve` policy on a graph's tools: a call the policy names raises an
 * `interrupt()` with the call (`{ id, name, args }`) before its tool runs, so that the run parks
 * in AwaitingApproval as a tool that interrupts itself parks it; on the continuation the
 * interrupt returns the answer, and a denied call answers `denied: <reason>` without running.
 * Each guarded tool carries the policy (`approvals.carry`). Without a policy the tools are given
 * back as they are.
 */
export function guardTools<T>(tools: readonly T[], approvals: MirrorApprovals): readonly T[] {
  if (approvals.policy === undefined || !Array.isArray(tools)) return tools;
  return tools.map((tool) => {
    const inner = tool as unknown as { name?: unknown; _call?: ToolCallFn; metadata?: Record<string, unknown> };
    const run = inner?._call;
    // Not a LangChain tool: the mirror's wrapTools refuses it by name.
    if (typeof run !== 'function' || typeof inner.name !== 'string') return tool;
    const name = inner.name;
    approvals.carry(name);
    const call: ToolCallFn = (arg, runManager, config) => {
      // As LangChain names the call to handleToolStart: the tool call's id when it has one, else the run's.
      const id = config?.toolCall?.id || runManager?.runId || name;
      if (approvals.requires({ id, name, input: arg })) {
        const answer = interrupt({ id, name, args: arg, [GUARD_MARK]: true }) as
          { approved?: unknown; reason?: unknown } | undefined;
        if (answer?.approved !== true) return `denied: ${String(answer?.reason ?? 'denied by a person')}`;
      }
      return run.call(tool, arg, runManager, config);
    };
    return Object.create(tool as object, {
      _call: { value: call, writable: true, configurable: true },
      metadata: { value: { ...inner.metadata, [GUARD_MARK]: true }, writable: true, configurable: true },
    }) as T;
  });
}
