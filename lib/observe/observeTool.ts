import type { ToolCall } from '../agent/AgentLoop';
import { InvalidArgumentError } from '../machine/InvalidArgumentError';
import type { StepMirror } from '../agent/StepMirror';
import type { RecordedToolAnswer } from '../agent/mirror/mirrorTool';
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
  const checked = async (): Promise<string> => {
    const output: unknown = await run();
    if (typeof output !== 'string')
      throw new InvalidArgumentError(
        `observeTool(${JSON.stringify(call.name)}) run`,
        'a function resolving to a string (the result the model is sent): JSON.stringify an object',
        output,
      );
    return output;
  };
  // In a resumed run a call with a recorded result is answered from the journal; one that threw throws again.
  const how = {
    served: (answer: RecordedToolAnswer): string => {
      if (answer.isError) throw new RecordedToolError(answer.output);
      return answer.output;
    },
  };
  // Under an `approve` policy, one call starts at a time; with none, nothing waits on another.
  if (mirror.approvals.policy === undefined) return mirror.tool(call, checked, how);
  return inTurn(observed, async (started) => {
    const denied = mirror.approvals.requires(call) ? await askFirst(mirror, call) : undefined;
    if (denied !== undefined) return denied;
    // Once the call is gated its tool runs beside the others: the next call may start.
    return mirror.tool(call, () => (started(), checked()), how);
  });
}

/**
 * Runs `start` once the run's calls started before it have (a call's tool then runs beside the
 * others), so that one wait for a person is open at a time and no start cuts it: the next call
 * starts when `start` calls its `started` (its tool began) or ends. A call the policy names parks
 * the run first (a resumed run takes an answer its journal kept), before the journal serves it,
 * as a framework asks before it runs its tools: denied, it is answered `denied: <reason>` and not run.
 */
async function inTurn<T>(observed: ObservedRun, start: (started: () => void) => Promise<T>): Promise<T> {
  const before = observed.starting;
  let started!: () => void;
  const mine = new Promise<void>((resolve) => (started = resolve));
  observed.starting = mine;
  const release = (): void => {
    started();
    if (observed.starting === mine) observed.starting = undefined;
  };
  try {
    if (before !== undefined) await before;
    return await start(release);
  } finally {
    release();
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
