import type { ToolSet } from 'ai';
import { InvalidArgumentError, type RecordedToolAnswer } from 'agent-state-machine';
import { messageOf } from '../../internal/messageOf';
import type { AISDKRun } from './AISDKRun';
import { isStreamedTool, lastOutput, streamedTool } from './streamedTool';

/**
 * A served result as the tool returned it: a value (kept as its JSON) parsed back, so the SDK
 * gives `toModelOutput` and the provider the value, as it did live, not its text.
 */
const AS_RETURNED = {
  served: (answer: RecordedToolAnswer): unknown => {
    if (answer.isError) throw new Error(answer.output);
    if (answer.json !== true) return answer.output;
    try {
      return JSON.parse(answer.output) as unknown;
    } catch (error) {
      throw new Error(
        `the journal marks this tool result as a value's JSON, but it is not JSON (${messageOf(error)}): a history file edited by hand? Resume from the file the run wrote`,
        { cause: error },
      );
    }
  },
};

/**
 * Wraps tools for `mirrorAISDK`: each call waits for a streamed response to be reported, is
 * answered from the journal in a resumed run, else checked by the mirror (`run`) before it runs
 * and recorded; a call the mirror's `approve` policy names needs approval (`needsApproval`);
 * tools without `execute` are kept as they are.
 */
export function wrapAISDKTools<T extends ToolSet>(t: T, run: AISDKRun): T {
  if (typeof t !== 'object' || t === null) throw new InvalidArgumentError('tools', 'a record of tool() definitions', t);
  return Object.fromEntries(
    Object.entries(t).map(([name, def]) => {
      const needs = (def as { needsApproval?: unknown }).needsApproval;
      if (needs !== undefined && needs !== false && !run.mirror.approvals.enabled)
        throw new InvalidArgumentError(
          `tools.${name}.needsApproval`,
          "left out, or the mirror made with `approvals: true` (give the tool to mirrorAISDK({ tools }), which then sets it): a call that waits for approval parks the run in AwaitingApproval, which this mirror's table lacks",
          needs,
        );
      const execute = def.execute;
      if (execute === undefined) return [name, def];
      const approvals = run.mirror.approvals;
      // The mirror's `approve` policy, beside the tool's own: the SDK stops for either.
      approvals.carry(name);
      const asks =
        approvals.policy === undefined
          ? {}
          : {
              needsApproval: async (input: unknown, options: { toolCallId: string }): Promise<boolean> =>
                approvals.requires({ id: options.toolCallId, name, input }) ||
                (typeof needs === 'function'
                  ? (await (needs as (i: unknown, o: unknown) => unknown)(input, options)) === true
                  : needs === true),
            };
      // Served from the journal in a resumed run (an error result thrown), else gated, run and recorded.
      const guarded = isStreamedTool(execute)
        ? (streamedTool(run, name, def as never, AS_RETURNED) as unknown as typeof execute)
        : ((async (input, ctx) => {
            const id = ctx.toolCallId;
            if (run.streaming !== undefined) await run.streaming;
            // An async iterable returned as it is (not a promise of one) is read to its end, as the
            // SDK reads it: its last output is the result. Called on the tool, as the SDK calls it.
            return run.mirror.tool({ id, name, input }, () => lastOutput(execute.call(def, input, ctx)), AS_RETURNED);
          }) as typeof execute);
      return [name, { ...def, ...asks, execute: guarded }];
    }),
  ) as T;
}
