import { StepMirror, type StepMirrorOptions } from '../agent/StepMirror';
import type { MirrorIntegration } from '../agent/mirror/mirrorEndings';
import type { TurnResult } from '../agent/TurnResult';
import { InvalidArgumentError } from '../machine/InvalidArgumentError';
import { observeScope, type ObservedRun } from './observeScope';

/** What `observeLoop` gives back: the run's result (outcome, usage, error) and what the loop returned. */
export interface ObservedResult<T> {
  result: TurnResult;
  /** What the loop returned; undefined when it threw or was stopped. */
  value: T | undefined;
}

/** An observed loop makes its requests as it wrote them: the mirror cannot add a final call's form or a note to them. */
const OBSERVED: MirrorIntegration = {
  honours: {},
  cannot: {
    'budget.wrapUp':
      'an observed loop makes its own requests, so the mirror cannot make a final call with no tools; cap the run with `maxCostUsd` or `maxLlmCalls`',
    'budget.visible': 'an observed loop makes its own requests, so no note can be added to them',
  },
};

/**
 * Runs your own agent loop, as it is, as one run of the sixteen states: `loop` keeps its
 * `while`, its messages and its SDK client. Two kinds of step are marked:
 * - LLM calls, by giving the client the metered fetch of its provider's subpath
 *   (`new OpenAI({ fetch: meteredFetch })`): each HTTP request is gated against the budgets
 *   before it is sent, bounded from its own body, charged from its answer, and journaled;
 * - tool calls, by running each through `observeTool(call, run)`.
 *
 * `mirror` is the mirror a batch's framework task is given (`observeTask` makes the task), or the
 * options of a new one (budgets, pricing, sink, journal). The run ends with the loop: a string it
 * returns is the run's text; a refused call (a spent budget, a cancel) ends it there, even when
 * the SDK's error reaches the loop; anything else the loop throws ends it in Error. A resumed
 * run's recorded calls are served at the wire and its recorded tools by `observeTool`, so the
 * loop runs again to where it was cut without a request sent or a tool run twice.
 */
export async function observeLoop<T>(
  mirror: StepMirror | StepMirrorOptions,
  input: string,
  loop: () => T | Promise<T>,
): Promise<ObservedResult<T>> {
  if (typeof input !== 'string') throw new InvalidArgumentError('input', 'a string (the user message)', input);
  if (typeof loop !== 'function') throw new InvalidArgumentError('loop', 'a function that runs your loop', loop);
  if (typeof mirror !== 'object' || mirror === null)
    throw new InvalidArgumentError('mirror', 'a StepMirror, or the options of a new one', mirror);
  const m = StepMirror.fromOptions(mirror instanceof StepMirror ? { mirror } : mirror, 'observeLoop', OBSERVED);
  if (m.running && observeScope.getStore()?.mirror === m)
    throw new InvalidArgumentError(
      'mirror',
      'a mirror whose run is not being observed already (observeLoop inside observeLoop)',
      mirror,
    );
  const run: ObservedRun = { mirror: m };
  m.runStart(input);
  // This run's tools run through observeTool, which asks a person about a call the `approve` policy names.
  m.approvals.carry();
  let value: T | undefined;
  try {
    value = await observeScope.run(run, loop);
  } catch (error) {
    await run.settling;
    if (!m.running && m.result !== undefined) return { result: m.result, value: undefined };
    return { result: m.signal.aborted ? m.runAborted() : m.runFailed(error), value: undefined };
  }
  await run.settling;
  if (!m.running && m.result !== undefined) return { result: m.result, value };
  return { result: m.runEnd(typeof value === 'string' ? { text: value } : {}), value };
}
