import { AsyncLocalStorage } from 'node:async_hooks';
import type { StepMirror } from '../agent/StepMirror';
import type { MirrorStop } from '../agent/mirror/MirrorStop';

/** An observed run, as the code inside `observeLoop` reaches it: its mirror, and why it stopped. */
export interface ObservedRun {
  readonly mirror: StepMirror;
  /** Set when the mirror refused a call or a tool: the run has ended, and this is why. */
  stop?: MirrorStop;
  /**
   * A streamed answer being read beside the SDK: its attempt settles when the stream ends. The
   * run's next step (a request, a tool, its end) waits for it, so the moves keep the loop's order.
   */
  settling?: Promise<void>;
  /** A model call is being sent or answered: a run makes one at a time, as a turn does. */
  calling?: boolean;
  /**
   * The last tool call to start (asking a person first, under `approve`): the next starts after
   * it, so that one wait is open at a time and no tool starts while the run waits for an answer.
   */
  starting?: Promise<unknown>;
}

/**
 * The run whose loop is executing: `observeLoop` runs the loop inside it, so the metered fetch
 * and `observeTool` find the run of the code that calls them, even with runs of many tasks
 * interleaved in one process on one SDK client.
 */
export const observeScope = new AsyncLocalStorage<ObservedRun>();
