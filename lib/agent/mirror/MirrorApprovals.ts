import { State, type StateName } from '../../../states/StateName';
import { InvalidArgumentError } from '../../machine/InvalidArgumentError';
import { extendTable, type TableExtension } from '../../machine/extendTable';
import type { TransitionTable } from '../../machine/TransitionTable';
import { DEFAULT_TABLE } from '../../machine/transitions';
import type { ToolCall } from '../AgentLoop';
import {
  answeredBy,
  ApprovalGate,
  assertApprovalPolicy,
  needsApproval,
  type ApprovalDecision,
  type ApprovalPolicy,
  type PendingApproval,
} from '../ApprovalGate';
import { APPROVAL_EXTENSION, ExtensionState } from '../extensionStates';
import { CHECKING_CANCELLATION } from '../turn/turnEvents';
import { TOOL_PHASE, type MirrorMoves } from './MirrorMoves';
import { refuseSlot } from './MirrorSlot';
import { ApprovalJournal } from '../journal/ApprovalJournal';
import type { RecordedLine, RunRecording } from '../journal/RunRecording';
import type { TurnResult } from '../TurnResult';
import { assertApprovalTimeout, timeOutMirrorRun } from './endMirrorRun';

const AWAITING_APPROVAL = ExtensionState.AwaitingApproval as unknown as StateName;

/**
 * What a mirror's table gains with `approvals: true`: the adapter's approval states, reached
 * from CheckingForCancellation and from RunningTool too — a framework runs the calls of a
 * response that need no approval before it reports the ones that wait.
 */
export const MIRROR_APPROVAL_EXTENSION: TableExtension<'AwaitingApproval' | 'ApprovalTimedOut'> = Object.freeze({
  states: APPROVAL_EXTENSION.states,
  edges: Object.freeze([
    ...(APPROVAL_EXTENSION.edges ?? []),
    Object.freeze([State.RunningTool, ExtensionState.AwaitingApproval] as const),
  ]),
});

/** The mirror's table: `base` (default the default table), with MIRROR_APPROVAL_EXTENSION when `approvals`. */
export function approvalTable(
  approvals: boolean,
  base: TransitionTable<string> | undefined,
): TransitionTable<string> | undefined {
  if (!approvals) return base;
  return extendTable(
    base ?? (DEFAULT_TABLE as TransitionTable<string>),
    MIRROR_APPROVAL_EXTENSION,
  ) as TransitionTable<string>;
}

/**
 * A mirror's `approvals`, `approve` and `approvalTimeoutMs`, checked: whether its runs may park
 * for approval (`approvals`, true by default beside a policy).
 */
export function mirrorApprovalsOn(approvals: unknown, approve: unknown, timeoutMs: unknown): boolean {
  assertApprovalPolicy(approve);
  const on = approvals ?? approve !== undefined;
  if (typeof on !== 'boolean') throw new InvalidArgumentError('approvals', 'true or false', approvals);
  if (approve !== undefined && !on)
    throw new InvalidArgumentError(
      'approvals',
      'true (or left out) beside `approve`: a call the policy names parks the run in AwaitingApproval',
      approvals,
    );
  assertApprovalTimeout(timeoutMs, on);
  return on;
}

/** A wait's listener: told of the run's paused result when a run starts waiting for people's answers. */
export type ApprovalListener = (paused: TurnResult) => void;

/**
 * The approval waits of a `StepMirror`'s runs: a framework that stopped its loop for a person's
 * answers (`StepMirror.awaitApproval`) parks the run in AwaitingApproval, the waiting calls in
 * the move's data; the answers (`approve`, `deny`, or those an interrupted attempt's journal
 * holds) move it on to RunningTool, a denied call answered `denied: <reason>` at once, and the
 * framework continues the same run with its own resume.
 */
export class MirrorApprovals {
  #gate: ApprovalGate | undefined;
  #answered: Promise<ApprovalDecision[] | undefined> | undefined;
  #settle: ((decisions: ApprovalDecision[] | undefined) => void) | undefined;
  readonly #listeners = new Set<ApprovalListener>();
  /** The answers' journal lines (the run goes on once they are kept), and with `resumeFrom` those the interrupted attempt kept. */
  readonly #journaled: ApprovalJournal;

  readonly #run: MirrorMoves;
  /** `approvalTimeoutMs`: a wait with no answer to every call this long ends the run. */
  readonly #timeoutMs: number | undefined;
  /** `approve`: the calls that wait for a person whatever the framework's own tools say. */
  readonly #policy: ApprovalPolicy | undefined;
  /** This run's calls a person approved (or the journal answered approved): their tools may run. */
  readonly #approved = new Set<string>();
  /** This run's calls whose tool asks inside itself before it does anything (`asksInTool`). */
  readonly #asksInTool = new Set<string>();
  /** What the policy said of this run's calls, by id: asked once, so a policy with state cannot say two things of one call. */
  readonly #said = new Map<string, boolean>();
  /** The tools that carry the policy to the framework (`carry`), or every one (a loop whose each tool call asks: `observeTool`). */
  readonly #carried = new Set<string>();
  #carriesAll = false;

  constructor(
    readonly enabled: boolean,
    recording: RunRecording | undefined,
    journal: readonly RecordedLine[] | undefined,
    run: MirrorMoves,
    timeoutMs?: number,
    policy?: ApprovalPolicy,
  ) {
    this.#journaled = new ApprovalJournal(journal, recording);
    this.#run = run;
    this.#timeoutMs = timeoutMs;
    this.#policy = policy;
  }

  /** The mirror's `approve` policy, if it has one. */
  get policy(): ApprovalPolicy | undefined {
    return this.#policy;
  }

  /** Whether the mirror's `approve` policy makes `call` wait for a person (the integration asks the framework to stop for it). */
  requires(call: ToolCall): boolean {
    if (this.#policy === undefined) return false;
    const key = `${call.name}\u0000${call.id}`;
    let said = this.#said.get(key);
    if (said === undefined) this.#said.set(key, (said = needsApproval(this.#policy, call)));
    return said;
  }

  /**
   * The policy is on tool `name` (with no name: on every tool): the framework asks for approval
   * of each call of it the policy names (an integration put it on the tool it wraps; a mirror
   * driven by hand that asks through `awaitApproval` says so too). A response calling a tool the
   * policy names that carries no policy ends the run before any of its tools runs.
   */
  carry(name?: string): void {
    if (name === undefined) this.#carriesAll = true;
    else this.#carried.add(name);
  }

  /** A new run of the mirror (not a parked run's continuation): the last run's answers and marks go, and a `carry()` of every tool (an observed loop's). */
  newRun(): void {
    this.#carriesAll = false;
    this.#approved.clear();
    this.#asksInTool.clear();
    this.#said.clear();
  }

  /**
   * Why a response with `calls` must end the run (`StepMirror.modelResponse`): the policy names a
   * call whose tool does not carry it, so nothing would ask a person before the framework ran it.
   */
  uncarried(calls: readonly ToolCall[] | undefined): InvalidArgumentError | undefined {
    // Every response passes here: with no policy, nothing more is looked at.
    if (this.#policy === undefined || this.#carriesAll) return undefined;
    const call = calls?.find((c) => !this.#carried.has(c.name) && this.requires(c));
    if (call === undefined) return undefined;
    return new InvalidArgumentError(
      'approve',
      `a policy the framework's tools carry: it names call ${call.id} (${call.name}), and tool ${call.name} reaches the framework without it, so the run ends before the response's tools run; give the tool through the integration that wraps tools (mirrorAISDK({ tools }), a LangGraphMirror's wrapTools(), an Agents SDK function tool run by AgentsMirror; a handoff, a hosted tool or a tool with no execute cannot carry it), or leave it out of the policy`,
      this.#policy,
    );
  }

  /**
   * `callId`'s tool asks for approval inside itself before it does anything (a LangGraph tool
   * wrapped by its mirror, whose `interrupt()` comes first): its start is not a call run unasked.
   */
  asksInTool(callId: string): void {
    this.#asksInTool.add(callId);
  }

  /**
   * Why `call` must not run (`StepMirror.toolStart`): the `approve` policy names it, and no
   * person approved it — the framework ran it without asking, because its tool did not reach
   * the framework through the integration that puts the policy on it.
   */
  unasked(call: ToolCall): InvalidArgumentError | undefined {
    if (!this.requires(call) || this.#approved.has(call.id) || this.#asksInTool.has(call.id)) return undefined;
    return new InvalidArgumentError(
      'approve',
      `a policy the framework's tools carry: it names call ${call.id} (${call.name}), which the framework ran without asking for approval, so it was not run; give the tools to the framework through the integration that wraps them (mirrorAISDK({ tools }), agentsMirror's agent(), a LangGraphMirror's wrapTools())`,
      this.#policy,
    );
  }

  /** Whether the run waits for answers now (`pending` are the calls without one). */
  get waiting(): boolean {
    return this.#gate !== undefined && !this.#gate.complete;
  }

  get pending(): PendingApproval[] {
    return this.#gate?.pending ?? [];
  }

  /**
   * With `resumeFrom`: whether the interrupted attempt's journal says `callId` waited for
   * approval, not taken yet — an `approval` line answering it (the next wait on it takes that
   * answer instead of asking), or one saying its tool asked inside itself (the run was cut while
   * parked, maybe unanswered: the next wait asks again). Either way a framework whose tool asks
   * inside itself lets it run again to its question, instead of answering it as cut off while
   * it ran. A journal with no such lines (whose answers are read from its tool lines) holds none.
   */
  inJournal(callId: string): boolean {
    return this.enabled && (this.#journaled.answers(callId) || this.#journaled.asked(callId));
  }

  /** Tells `listener` of each wait that needs people's answers (not of one the journal answered). Returns how to stop. */
  listen(listener: ApprovalListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * The run stops for answers to `calls` (from the tool phase): AwaitingApproval, the calls in
   * the move's data. Calls an interrupted attempt answered are answered again at once, from its
   * journal; the rest wait, until `cancel` ends the run when `signal` aborts. Returns the run's
   * paused result.
   */
  park(calls: readonly ToolCall[], state: StateName, signal: AbortSignal, cancel: () => void): TurnResult {
    const run = this.#run;
    if (!run.running || !TOOL_PHASE.has(state))
      throw new InvalidArgumentError(
        'calls',
        `calls of a response whose tools are pending (the run is in ${state})`,
        calls,
      );
    if (!this.enabled)
      throw new InvalidArgumentError(
        'approvals',
        'true on a mirror whose framework asks people to approve tool calls (its table then has AwaitingApproval)',
        false,
      );
    if (calls.length === 0)
      throw new InvalidArgumentError('calls', 'at least one tool call waiting for approval', calls);
    if (this.#gate !== undefined && !this.#gate.complete)
      throw new InvalidArgumentError('calls', 'calls of a run not already waiting for approval', calls);
    if (state === State.ToolUseRequested) run.move(State.CheckingForCancellation, CHECKING_CANCELLATION);
    for (const call of calls)
      if (!run.slots.some((s) => s.call.id === call.id))
        run.slots.push({ call, status: 'pending', startedAt: 0, endedAt: 0 });
    const gate = new ApprovalGate(calls);
    this.#gate = gate;
    this.#answered = new Promise((resolve) => (this.#settle = resolve));
    // A tool that started and asks inside itself (or asked so before a cut) is journaled as
    // asked: a cut while parked must not read it as a tool cut off while it ran.
    const inTool = calls.filter(
      (c) => run.slots.some((s) => s.call.id === c.id && s.status === 'running') || this.#journaled.asked(c.id),
    );
    // Answers the interrupted attempt journaled are taken again, not asked again.
    const known = this.#journaled.recorded(calls);
    for (const call of inTool) if (!known.some((d) => d.callId === call.id)) this.#ask(call);
    const move = this.#journaled.waitMove(calls, known);
    if (this.#timeoutMs !== undefined) move.data['timeoutMs'] = this.#timeoutMs;
    run.move(AWAITING_APPROVAL, move);
    for (const decision of known) this.#decide(decision, true);
    const paused: TurnResult = {
      outcome: 'awaiting_approval',
      usage: run.meter!.usage,
      turn: run.turn,
      transitions: run.moves,
      pendingApprovals: gate.pending,
    };
    if (run.texts !== undefined) paused.texts = [...run.texts];
    if (gate.complete) return paused;
    const onAbort = (): void => void (this.waiting && cancel());
    signal.addEventListener('abort', onAbort, { once: true });
    const timeoutMs = this.#timeoutMs;
    // The wait's own bound, as the adapter's: not the run's wall time.
    const timer =
      timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            if (this.#gate !== gate || gate.complete) return;
            timeOutMirrorRun(
              this.#run,
              timeoutMs,
              gate.pending.map((p) => p.callId),
            );
            this.ended();
          }, timeoutMs);
    void this.answers().then(() => {
      signal.removeEventListener('abort', onAbort);
      clearTimeout(timer);
    });
    for (const listener of this.#listeners) listener(paused);
    if (signal.aborted) onAbort();
    return paused;
  }

  /**
   * Approves a call the run waits on: its framework runs it, with the input its model gave.
   * `by` (who approved) is kept in the run's `approval` journal line.
   */
  approve(callId: string, options: { input?: unknown; by?: string } = {}): void {
    if (typeof options !== 'object' || options === null)
      throw new InvalidArgumentError('options', 'an object { input?, by? }', options);
    this.#decide({
      callId,
      approved: true,
      ...('input' in options ? { input: options.input } : {}),
      ...answeredBy(options),
    });
  }

  /**
   * Denies a call the run waits on: it does not run, and the framework tells its model so (with
   * `reason`). `by` (who denied) is kept in the run's `approval` journal line.
   */
  deny(callId: string, reason = 'denied by a person', options: { by?: string } = {}): void {
    if (typeof reason !== 'string') throw new InvalidArgumentError('reason', 'a string', reason);
    if (typeof options !== 'object' || options === null)
      throw new InvalidArgumentError('options', 'an object { by? }', options);
    this.#decide({ callId, approved: false, reason, ...answeredBy(options) });
  }

  /** One answer; the last moves the run on to RunningTool. */
  #decide(decision: ApprovalDecision, fromJournal = false): void {
    const run = this.#run;
    const gate = this.#gate;
    if (gate === undefined || gate.complete || !run.running || run.machine.pendingState !== AWAITING_APPROVAL)
      throw new InvalidArgumentError(
        'callId',
        'a call of a run waiting for approval (this run waits on none: it went on or ended)',
        decision.callId,
      );
    if ('input' in decision && decision.input !== undefined)
      throw new InvalidArgumentError(
        'input',
        'left out: a framework runs an approved call with the input its model gave (its approval carries no other)',
        decision.input,
      );
    gate.decide(decision);
    if (decision.approved) this.#approved.add(decision.callId);
    this.#journal(decision, fromJournal);
    if (!gate.complete) return;
    const decisions = gate.decisions();
    run.move(State.RunningTool, {
      description: `answered: ${decisions.map((d) => `${d.callId} ${d.approved ? 'approved' : 'denied'}`).join(', ')}`,
      data: { answers: decisions, ...(fromJournal ? { fromJournal: true } : {}) },
    });
    const at = run.deps.clock();
    for (const d of decisions) {
      const slot = run.slots.find((s) => s.call.id === d.callId);
      if (!d.approved && slot !== undefined && slot.result === undefined)
        refuseSlot(slot, 'not_run', `denied: ${d.reason}`, at, run.deps.journal, run.turn);
    }
    this.#finish(decisions);
  }

  /** Resolves with the answers once every call has one (the run moved on), or undefined once the run ended instead. */
  answers(): Promise<ApprovalDecision[] | undefined> {
    return this.#answered ?? Promise.resolve(undefined);
  }

  /** The run ended (cancelled while it waited, or any other end): a wait still open resolves with no answers. */
  ended(): void {
    if (this.#gate !== undefined && !this.#gate.complete) {
      this.#gate = undefined;
      this.#finish(undefined);
    }
  }

  /** Journals an answer as it is taken, before the tool can run (`ApprovalJournal.write`). */
  #journal(decision: ApprovalDecision, fromJournal: boolean): void {
    const run = this.#run;
    const { journal, ledger, clock } = run.deps;
    const call = this.#gate?.calls.find((c) => c.id === decision.callId);
    this.#journaled.write(journal === undefined ? undefined : ledger, run.turn, call, decision, clock(), fromJournal);
  }

  /** Journals that `call`'s tool asked inside itself, before the run parks (`ApprovalJournal.ask`). */
  #ask(call: ToolCall): void {
    const run = this.#run;
    const { journal, ledger, clock } = run.deps;
    this.#journaled.ask(journal === undefined ? undefined : ledger, run.turn, call, clock());
  }

  #finish(decisions: ApprovalDecision[] | undefined): void {
    const settle = this.#settle;
    this.#settle = undefined;
    const commits = this.#journaled.commits();
    if (settle === undefined) return;
    if (commits.length === 0 || decisions === undefined) return settle(decisions);
    // A line not kept is the sink's error (the machine reports it): the run goes on either way.
    void Promise.allSettled(commits).then(() => settle(decisions));
  }
}

/** Why a run that waits for approval cannot end: what `runEnd` says then. */
export const ENDED_WAITING =
  'the framework reported its end while its run waited for approval: continue it with the answers (mirrorAISDK: `await m.answered()`, then call the SDK again with the messages)';
