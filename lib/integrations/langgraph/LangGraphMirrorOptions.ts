import type { StepMirror, StepMirrorOptions } from 'agent-state-machine';
import type { LangGraphResumeValue } from './LangGraphApprovals';

/**
 * Where the mirror hears a LangGraph run:
 * - `'graph'` (the default): on the graph's callbacks, so it sees every chat model and tool the
 *   graph calls, wrapped or not. LangChain then reports every node, channel write and branch of
 *   each step to callbacks, which costs ~0.5 ms a step whatever the handler does.
 * - `'wrapped'`: only the model and tools given to the graph through `wrapModel` and `wrapTools`
 *   report, as their own callbacks; the graph runs with none of the mirror's. The run must go
 *   through `run()`, which starts and ends it. A model or tool the graph calls that was not
 *   wrapped is not seen, so it is neither counted nor capped.
 */
export type LangGraphObserve = 'graph' | 'wrapped';

/** A mirror's options (or the batch's mirror), and where it hears the graph. */
export type LangGraphMirrorOptions = (StepMirrorOptions | { mirror: StepMirror }) & {
  /** Where the mirror hears the graph: `'graph'` (the default) or `'wrapped'`; see `LangGraphObserve`. */
  observe?: LangGraphObserve;
  /** With `approvals: true`: the value `interrupt()` returns for an answer (default `{ approved: true }` / `{ approved: false, reason }`). */
  resumeValue?: LangGraphResumeValue;
};
