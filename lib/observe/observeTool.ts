import type { ToolCall } from '../agent/AgentLoop';
import { InvalidArgumentError } from '../machine/InvalidArgumentError';
import type { StepMirror } from '../agent/StepMirror';
import { observeScope, type ObservedRun } from './observeScope';

/** A tool call that ended in error in the run a resume serves: thrown again, with its recorded output. */
export class RecordedToolError extends Error {
  override readonly name = 'RecordedToolError';
}

/**
 * Marks one tool call of an observed loop (`observeLoop`): `call` is the call as the model asked
 * for it (`{ id, name, input }`), `run` the code that runs it, resolving to the result the model
 * is sent. The call is checked against the budgets and the run's signal first (a refusal is
 * thrown: send it as the result, or let it end the loop), timed, and journaled; in a resumed run a
 * call with a recorded result is answered from the journal without running (one that threw
 * throws `RecordedToolError` with its recorded output). A call the mirror's `approve` policy
 * names parks the run in AwaitingApproval first (one call a wait, calls made at once asked one
 * after the other), answered by `mirror.approvals`, a batch's `onApproval` or `agent-sm approve`:
 * approved, it runs; denied, it resolves to `denied: <reason>` without running. Outside an
 * observed run it only runs `run`.
 */
export async function observeTool(call: ToolCall, run: () => string | Promise<string>): Promise<string> {
  if (typeof call !== 'object' || call === null || typeof call.id !== 'string' || typeof call.name !== 'string')
    throw new InvalidArgumentError(
      'call',
      'a tool call { id: string, name: string, input? } as the model asked for it',
      call,
    );
  if (typeof run !== 'function') throw new InvalidArgumentError('run', 'a function that runs the tool', run);
  const observed = observeScope.getStore();
  if (observed === undefined) return run();
  await observed.settling;
  const { mirror } = observed;
  // Under an `approve` policy, one call starts at a time; with none, nothing waits on another.
  const answered =
    mirror.approvals.policy === undefined ? await start(mirror, call) : await startInTurn(observed, call);
  if (answered !== undefined) return answered;
  let output: unknown;
  try {
    output = await run();
  } catch (error) {
    mirror.toolEnd(call.id, { error });
    throw error;
  }
  if (typeof output !== 'string') {
    const error = new InvalidArgumentError(
      `observeTool(${JSON.stringify(call.name)}) run`,
      'a function resolving to a string (the result the model is sent): JSON.stringify an object',
      output,
    );
    mirror.toolEnd(call.id, { error });
    throw error;
  }
  mirror.toolEnd(call.id, { output });
  return output;
}

/** Starts `call`: undefined to run it, or the answer it gets without running (recorded in the journal a resumed run serves). */
async function start(mirror: StepMirror, call: ToolCall): Promise<string | undefined> {
  const recorded = mirror.recordedTool(call);
  if (recorded !== undefined) {
    if (recorded.isError) throw new RecordedToolError(recorded.output);
    return recorded.output;
  }
  const stop = await mirror.toolStart(call);
  if (stop !== undefined) throw stop;
  return undefined;
}

/**
 * Starts `call` once the run's calls started before it have (its tool then runs beside the
 * others), so that one wait for a person is open at a time and no start cuts it. A call the
 * policy names parks the run first (a resumed run takes an answer its journal kept), before the
 * journal serves it, as a framework asks before it runs its tools: denied, it is answered
 * `denied: <reason>` and not run.
 */
async function startInTurn(observed: ObservedRun, call: ToolCall): Promise<string | undefined> {
  const { mirror } = observed;
  const before = observed.starting;
  let started!: () => void;
  const mine = new Promise<void>((resolve) => (started = resolve));
  observed.starting = mine;
  try {
    if (before !== undefined) await before;
    const denied = mirror.approvals.requires(call) ? await askFirst(mirror, call) : undefined;
    return denied ?? (await start(mirror, call));
  } finally {
    started();
    if (observed.starting === mine) observed.starting = undefined;
  }
}

/**
 * Parks the run for a person's answer to `call`. Resolves to `denied: <reason>` for a denial;
 * undefined when approved, or when the run ended before or while it waited (the tool's start
 * then refuses it).
 */
async function askFirst(mirror: StepMirror, call: ToolCall): Promise<string | undefined> {
  if (!mirror.running) return undefined;
  mirror.awaitApproval([call]);
  const decision = (await mirror.approvals.answers())?.find((d) => d.callId === call.id);
  return decision === undefined || decision.approved ? undefined : `denied: ${decision.reason}`;
}
