export { traceAgent } from './traceAgent';
export type { TraceAgentOptions, TraceableAgent } from './traceAgent';
export { traceBatch } from './traceBatch';
export type { TraceBatchOptions } from './traceBatch';
