// '/web': the main entry sets up LangChain's AsyncLocalStorage when loaded, which changes how an
// aborted graph rejects; this entry exports the same Command with no such setup.
import { Command } from '@langchain/langgraph/web';
import {
  InvalidArgumentError,
  OperationError,
  type ApprovalDecision,
  type StepMirror,
  type ToolCall,
} from 'agent-state-machine';
import { isGuarded } from './guardTools';
import { interruptCall, type LangGraphInterrupt } from './interruptCall';

/**
 * The value `interrupt()` returns to the node when the run continues, made from a person's
 * answer to `call`. The default: `{ approved: true }`, or `{ approved: false, reason }`.
 */
export type LangGraphResumeValue = (decision: ApprovalDecision, call: ToolCall) => unknown;

export const defaultResumeValue: LangGraphResumeValue = (d) =>
  d.approved ? { approved: true } : { approved: false, reason: d.reason };

/** An interrupt the run waits on: its id (LangGraph's, to resume it by) and the call it asks about. */
interface Waiting {
  interruptId: string | undefined;
  call: ToolCall;
  /** Raised by the `approve` policy's guard (`guardTools`), not by the user's code. */
  guard: boolean;
}

/**
 * A `LangGraphMirror`'s approval waits (its mirror made with `approvals: true`): a graph that
 * stopped at `interrupt()`s parks the run in AwaitingApproval, one waiting call an interrupt;
 * once each has an answer, `answered()` gives the `Command({ resume })` that continues the same
 * run on the same thread. On the continuation, a tool that raised its interrupt starts again
 * (LangGraph re-runs the interrupted node): its start was counted, so it is not counted again;
 * and a model call the interrupted node made before its `interrupt()` and makes again is
 * answered from the journal with the response it had (the mirror's `recordedResponse({ again })`,
 * through `wrapModel`), not sent again.
 */
export class LangGraphApprovals {
  readonly #mirror: StepMirror;
  readonly #resumeValue: LangGraphResumeValue;
  /** This graph run's interrupts raised inside a tool, by interrupt id: the tool call. */
  readonly #inTool = new Map<string, ToolCall>();
  /** This graph run's interrupts its nodes and tools raised, by id (callbacks hear no `__interrupt__`). */
  readonly #heard = new Map<string, LangGraphInterrupt>();
  #waiting: Waiting[] = [];
  /** The last wait's answers, by call id, and whether its tool had started (raised the interrupt). */
  readonly #answers = new Map<string, { approved: boolean; started: boolean }>();
  /** The run is parked: the graph's next run is its continuation. */
  #parked = false;
  /** The run's model calls (their numbers, `mirror.callsAnswered`) of this graph run's tasks, by checkpoint namespace: a re-run of the task on the continuation makes them again. */
  #calls = new Map<string, number[]>();
  /** On a continuation: the parked graph run's calls its re-run tasks have not made again yet. */
  #earlier = new Map<string, number[]>();
  /** Whether the graph runs now as a parked run's continuation. */
  #continuing = false;

  constructor(mirror: StepMirror, resumeValue: LangGraphResumeValue = defaultResumeValue) {
    if (typeof resumeValue !== 'function')
      throw new InvalidArgumentError(
        'resumeValue',
        'a function (decision, call) => the value interrupt() returns on the continuation; leave it out for { approved: true } / { approved: false, reason }',
        resumeValue,
      );
    this.#mirror = mirror;
    this.#resumeValue = resumeValue;
  }

  /** Whether a stopped graph parks its run (the mirror has approval states). */
  get enabled(): boolean {
    return this.#mirror.approvals.enabled;
  }

  /**
   * The graph's root run starts. Returns true when it is a parked run's continuation (the same
   * run of the mirror); throws, naming what to do, when the run is parked and this is not its
   * answered continuation.
   */
  graphStarts(input: unknown): boolean {
    // A parked run that ended meanwhile (cancelled while it waited): the graph starts a new run.
    const parked = this.#parked && this.#mirror.running;
    if (parked) this.#assertContinuation(input);
    this.#inTool.clear();
    this.#heard.clear();
    this.#earlier = parked ? this.#calls : new Map();
    this.#calls = new Map();
    this.#parked = false;
    this.#continuing = parked;
    return parked;
  }

  #assertContinuation(input: unknown): void {
    if (this.#mirror.approvals.waiting)
      throw new InvalidArgumentError(
        'input',
        `the Command from lg.answered(), once every waiting call has an answer (run ${this.#mirror.turn} waits for approval of ${this.#mirror.approvals.pending.map((p) => p.callId).join(', ')})`,
        input,
      );
    if ((input as { lg_name?: unknown } | null)?.lg_name !== 'Command')
      throw new InvalidArgumentError(
        'input',
        "the Command from lg.answered(): the run is parked at an interrupt(), and only its answers continue it (a new input on the thread would be another run's)",
        input,
      );
  }

  /** A tool the ToolNode ran raised `interrupts` (a GraphInterrupt): they are about its call. */
  toolInterrupted(interrupts: unknown, call: ToolCall): void {
    if (!Array.isArray(interrupts)) return;
    for (const i of interrupts as LangGraphInterrupt[]) this.#inTool.set(keyOf(i), call);
    this.heard(interrupts);
  }

  /** A node (or tool) of the graph raised `interrupts` (its GraphInterrupt's). */
  heard(interrupts: unknown): void {
    if (Array.isArray(interrupts)) for (const i of interrupts as LangGraphInterrupt[]) this.#heard.set(keyOf(i), i);
  }

  /** The interrupts the graph stopped at: its output's `__interrupt__`, else those its nodes raised. */
  stoppedAt(output: unknown): LangGraphInterrupt[] {
    const given = (output as { __interrupt__?: unknown } | undefined)?.__interrupt__;
    if (Array.isArray(given) && given.length > 0) return given as LangGraphInterrupt[];
    return [...this.#heard.values()];
  }

  /**
   * The graph stopped at `interrupts`: the run parks in AwaitingApproval with the calls they ask
   * about. Returns why it cannot (a value that names no call, a run not in its tool phase).
   */
  park(interrupts: readonly LangGraphInterrupt[], lastCalls: readonly ToolCall[]): Error | undefined {
    const waiting: Waiting[] = [];
    for (const interrupt of interrupts) {
      const inTool = this.#inTool.get(keyOf(interrupt));
      const call = interruptCall(interrupt ?? {}, { inTool, lastCalls });
      if (call instanceof Error) return call;
      if (waiting.some((w) => w.call.id === call.id))
        return new InvalidArgumentError(
          'interrupt() value',
          `one interrupt a tool call: two interrupts ask about call ${call.id} (${call.name})`,
          interrupts.map((i) => i?.value),
        );
      waiting.push({ interruptId: interrupt?.id, call, guard: isGuarded(interrupt?.value) });
    }
    if (waiting.length > 1 && waiting.some((w) => w.interruptId === undefined))
      return new InvalidArgumentError(
        '__interrupt__',
        'interrupts with ids (LangGraph 1.x gives each one), to resume several at once',
        interrupts,
      );
    try {
      this.#mirror.awaitApproval(waiting.map((w) => w.call));
    } catch (error) {
      return error as Error;
    }
    this.#waiting = waiting;
    this.#answers.clear();
    this.#parked = true;
    return undefined;
  }

  /**
   * Once every waiting call has an answer: the `Command({ resume })` that continues the run, one
   * resume value an interrupt (`resumeValue`), by interrupt id when several wait. Undefined when
   * the run does not wait, or ended meanwhile. Handed out once.
   */
  async answered(): Promise<Command<unknown, never, never> | undefined> {
    const waiting = this.#waiting;
    if (waiting.length === 0) return undefined;
    const decisions = await this.#mirror.approvals.answers();
    if (this.#waiting !== waiting) return undefined;
    this.#waiting = [];
    if (decisions === undefined) return undefined;
    const values = waiting.map((w) => {
      const decision = decisions.find((d) => d.callId === w.call.id)!;
      this.#answers.set(w.call.id, {
        approved: decision.approved,
        started: [...this.#inTool.values()].includes(w.call),
      });
      // The guard's interrupt reads the default value, whatever `resumeValue` makes for the user's own.
      return (w.guard ? defaultResumeValue : this.#resumeValue)(decision, w.call);
    });
    if (waiting.length === 1) return new Command<unknown, never, never>({ resume: values[0] });
    return new Command<unknown, never, never>({
      resume: Object.fromEntries(waiting.map((w, i) => [w.interruptId!, values[i]])),
    });
  }

  /**
   * A tool starts on the continuation: `'counted'` for an approved call whose tool raised the
   * interrupt (it starts again, its start counted before), `'denied'` for a denied call (the
   * journal holds its denial; its run is not recorded), undefined for any other.
   */
  toolRestarts(callId: string): 'counted' | 'denied' | undefined {
    if (!this.#continuing) return undefined;
    const answer = this.#answers.get(callId);
    if (answer === undefined) return undefined;
    this.#answers.delete(callId);
    if (!answer.approved) return 'denied';
    return answer.started ? 'counted' : undefined;
  }

  /**
   * On a resumed run (`resumeFrom`), before the parked run's continuation: whether call `callId`'s
   * tool asked inside itself before the cut (the journal holds its question, or its answer) — it
   * runs again to its `interrupt()` (its start was counted then), whose wait takes the journaled
   * answer, or, unanswered, parks the run again with the same call; on the continuation the
   * resume tool policy says whether a call approved before the cut runs.
   */
  asksAgain(callId: string): boolean {
    return !this.#continuing && this.#mirror.approvals.inJournal(callId);
  }

  /** A tool starts (`metadata`, its run's): a tool the policy guards asks inside itself first, so its start is not a call run unasked. */
  toolStarts(callId: string, metadata: Record<string, unknown> | undefined): void {
    if (isGuarded(metadata)) this.#mirror.approvals.asksInTool(callId);
  }

  /** The task `task` (its checkpoint namespace) made the run's model call number `call`: noted, for a re-run of the task. */
  responded(task: string | undefined, call: number): void {
    if (task === undefined) return;
    const kept = this.#calls.get(task) ?? [];
    kept.push(call);
    this.#calls.set(task, kept);
  }

  /**
   * On the continuation, the number of the run's model call that a model call of re-run task
   * `task` makes again (it made it before the interrupt), if it made one: the mirror serves it
   * from its journal (`recordedResponse({ again })`).
   */
  remade(task: string | undefined): number | undefined {
    if (!this.#continuing || task === undefined) return undefined;
    const call = this.#earlier.get(task)?.shift();
    if (call !== undefined) this.responded(task, call);
    return call;
  }
}

/** An interrupt's key: its id (LangGraph 1.x gives each one), else its value. */
function keyOf(interrupt: LangGraphInterrupt | undefined): string {
  return interrupt?.id ?? JSON.stringify(interrupt?.value);
}

/** The graph task a model call belongs to (its checkpoint namespace): a task re-run on a resume has the same. */
export function taskOf(metadata: Record<string, unknown> | undefined): string | undefined {
  const ns = metadata?.langgraph_checkpoint_ns ?? metadata?.checkpoint_ns;
  return typeof ns === 'string' && ns !== '' ? ns : undefined;
}

/** Why a re-run node's model call is refused when the model is not wrapped: it would be sent, and paid, twice. */
export function remadeUnwrapped(task: string | undefined): OperationError {
  return new OperationError(
    `the model call of graph task ${task} on the continuation`,
    new Error(
      'the node re-runs from its start when the graph resumes (LangGraph re-runs an interrupted node), and makes again the model call it made before its interrupt(): give the graph lg.wrapModel(model), so that the call is answered with the response it had, or make the model call in a node of its own before the interrupting one',
    ),
  );
}
