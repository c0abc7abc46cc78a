/**
 * OpenTelemetry spans of agents and batches, named by the GenAI semantic conventions (`@opentelemetry/api`, an optional peer dependency).
 *
 * @module agent-state-machine/otel
 */
export { traceAgent } from './traceAgent';
export type { TraceAgentOptions, TraceableAgent } from './traceAgent';
export { traceBatch } from './traceBatch';
export type { TraceBatchOptions } from './traceBatch';
