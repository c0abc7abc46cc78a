// '/web', as LangGraphApprovals' Command: the main entry's AsyncLocalStorage set-up is not this module's to make.
import { interrupt } from '@langchain/langgraph/web';
import type { MirrorApprovals } from 'agent-state-machine';

type ToolCallFn = (arg: unknown, runManager?: { runId?: string }, config?: { toolCall?: { id?: string } }) => unknown;

/** What the guard of a LangGraph mirror's tools shares with its approvals. */
export interface GuardedCalls {
  /** The names of the tools guarded: each asks inside itself, before it does anything. */
  readonly tools: Set<string>;
  /** The calls the guard asked about: continued with the default resume value, which the guard reads. */
  readonly asked: Set<string>;
}

/**
 * The mirror's `approve` policy on a graph's tools: a call the policy names raises an
 * `interrupt()` with the call (`{ id, name, args }`) before its tool runs, so that the run parks
 * in AwaitingApproval as a tool that interrupts itself parks it; on the continuation the
 * interrupt returns the answer, and a denied call answers `denied: <reason>` without running.
 * Without a policy the tools are given back as they are.
 */
export function guardTools<T>(tools: readonly T[], approvals: MirrorApprovals, guarded: GuardedCalls): readonly T[] {
  if (approvals.policy === undefined || !Array.isArray(tools)) return tools;
  return tools.map((tool) => {
    const inner = tool as unknown as { name?: unknown; _call?: ToolCallFn };
    const run = inner?._call;
    // Not a LangChain tool: the mirror's wrapTools refuses it by name.
    if (typeof run !== 'function' || typeof inner.name !== 'string') return tool;
    const name = inner.name;
    guarded.tools.add(name);
    const call: ToolCallFn = (arg, runManager, config) => {
      const id = config?.toolCall?.id ?? runManager?.runId ?? name;
      if (approvals.requires({ id, name, input: arg })) {
        guarded.asked.add(id);
        const answer = interrupt({ id, name, args: arg }) as { approved?: unknown; reason?: unknown } | undefined;
        if (answer?.approved !== true) return `denied: ${String(answer?.reason ?? 'denied by a person')}`;
      }
      return run.call(tool, arg, runManager, config);
    };
    return Object.create(tool as object, { _call: { value: call, writable: true, configurable: true } }) as T;
  });
}
