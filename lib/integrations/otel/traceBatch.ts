import { context as otelContext, trace, SpanKind, SpanStatusCode, type Tracer } from '@opentelemetry/api';
import {
  InvalidArgumentError,
  runBatch,
  type BatchOptions,
  type BatchReport,
  type BatchTask,
} from 'agent-state-machine';
import { ASM, GEN_AI, GEN_AI_OPERATION, INSTRUMENTATION_SCOPE, spanName } from '../../internal/genAiConventions';
import { VERSION } from '../../internal/version';
import { traceAgent, type TraceAgentOptions } from './traceAgent';

/** Options of `traceBatch(tasks, batchOptions, options)`: those of `traceAgent` for every run, and the workflow's name. */
export interface TraceBatchOptions extends Omit<TraceAgentOptions, 'parentContext'> {
  /** `gen_ai.workflow.name`; the batch span is named `invoke_workflow {workflowName}`. */
  workflowName?: string;
}

/**
 * `runBatch` traced: one `invoke_workflow` span (INTERNAL) for the batch, with each run's turn
 * an `invoke_agent` span under it (and its `chat` and `execute_tool` spans under that). The
 * batch span carries the totals, the limits and why the batch stopped early; it is an error
 * when any run did not end normally. Your own `onRun`, if any, still runs.
 */
export async function traceBatch(
  tasks: Iterable<BatchTask>,
  batchOptions: BatchOptions = {},
  options: TraceBatchOptions = {},
): Promise<BatchReport> {
  if (typeof options !== 'object' || options === null) throw new InvalidArgumentError('options', 'an object', options);
  const { workflowName, ...agentOptions } = options;
  if (workflowName !== undefined && (typeof workflowName !== 'string' || workflowName === ''))
    throw new InvalidArgumentError('options.workflowName', 'a non-empty string', workflowName);
  const tracer: Tracer = agentOptions.tracer ?? trace.getTracer(INSTRUMENTATION_SCOPE, VERSION);
  const clock = batchOptions.clock ?? Date.now;
  const span = tracer.startSpan(
    spanName(GEN_AI_OPERATION.invokeWorkflow, workflowName),
    {
      kind: SpanKind.INTERNAL,
      startTime: clock(),
      attributes: {
        [GEN_AI.operationName]: GEN_AI_OPERATION.invokeWorkflow,
        ...(workflowName === undefined ? {} : { [GEN_AI.workflowName]: workflowName }),
      },
    },
    otelContext.active(),
  );
  const parentContext = trace.setSpan(otelContext.active(), span);
  const userOnRun = batchOptions.onRun;
  try {
    const report = await runBatch(tasks, {
      ...batchOptions,
      onRun: (run) => {
        const stop = traceAgent(run.agent, { ...agentOptions, tracer, parentContext });
        let userEnd: (() => void) | void;
        try {
          userEnd = userOnRun?.(run);
        } catch (error) {
          stop();
          throw error;
        }
        return () => {
          stop();
          if (typeof userEnd === 'function') userEnd();
        };
      },
    });
    const t = report.totals;
    span.setAttributes({
      [GEN_AI.usageInputTokens]: t.inputTokens,
      [GEN_AI.usageOutputTokens]: t.outputTokens,
      [ASM.usageCostUsd]: t.costUsd,
      [ASM.usageUncertainUsd]: t.uncertainUsd,
      [ASM.usageReleasedUsd]: t.releasedUsd,
      [ASM.usageUnpricedCalls]: t.unpricedCalls,
      [ASM.usageLlmCalls]: t.llmCalls,
      [ASM.usageToolCalls]: t.toolCalls,
      'agent_state_machine.batch.runs': report.runs.length,
      'agent_state_machine.batch.concurrency': report.concurrency,
      ...Object.fromEntries(
        Object.entries(t.outcomes).map(([outcome, n]) => [`agent_state_machine.batch.outcomes.${outcome}`, n]),
      ),
      ...Object.fromEntries(
        Object.entries(report.limits.total ?? {})
          .filter(([, v]) => typeof v === 'number')
          .map(([k, v]) => [
            `${ASM.budgetPrefix}total.${k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)}`,
            v as number,
          ]),
      ),
      ...(report.stopped === undefined ? {} : { 'agent_state_machine.batch.stopped': report.stopped.reason }),
    });
    const failed = report.runs.length - t.outcomes.end_of_turn - (t.outcomes.wrapped_up ?? 0);
    if (report.stopped !== undefined || failed > 0) {
      span.setAttribute(GEN_AI.errorType, report.stopped?.reason ?? 'run_failed');
      span.setStatus({
        code: SpanStatusCode.ERROR,
        message: report.stopped?.message ?? `${failed} of ${report.runs.length} runs did not end normally`,
      });
    }
    span.end(clock());
    return report;
  } catch (error) {
    span.setAttribute(GEN_AI.errorType, error instanceof Error ? error.name : '_OTHER');
    if (error instanceof Error) span.recordException(error);
    span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
    span.end(clock());
    throw error;
  }
}
