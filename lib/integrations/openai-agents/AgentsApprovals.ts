import { RunState, type RunToolApprovalItem } from '@openai/agents';
import {
  InvalidArgumentError,
  OperationError,
  type ApprovalDecision,
  type StepMirror,
  type ToolCall,
} from 'agent-state-machine';
import { parseJsonOrText } from '../../internal/parseJsonOrText';
import type { AnyState } from './runStateOf';

/**
 * The text the model gets for a denied call (the `message` of the SDK's `state.reject(item)`),
 * made from a person's answer to `call`; undefined lets the SDK word it (its
 * `toolErrorFormatter`, else its default). The default: `denied: <reason>`.
 */
export type AgentsRejectionMessage = (
  decision: Extract<ApprovalDecision, { approved: false }>,
  call: ToolCall,
) => string | undefined;

export const defaultRejectionMessage: AgentsRejectionMessage = (d) => `denied: ${d.reason}`;

/** The run parked at the SDK's interruptions: its state, and the approval items the calls wait on. */
interface Parked {
  state: AnyState;
  items: { item: RunToolApprovalItem; call: ToolCall }[];
}

/**
 * An `AgentsMirror`'s approval waits (its mirror made with `approvals: true`; a batch's is): an
 * SDK run that stopped on interruptions (tools with `needsApproval`) parks the mirror's run in
 * AwaitingApproval, one waiting call an interruption; once each has an answer, `answered()`
 * gives the SDK's `RunState` with each answer applied (`state.approve(item)`,
 * `state.reject(item, { message })`), and `run(agent, state)` continues the same run: the SDK
 * runs the approved calls and tells the model of the rejected ones, with no model call sent again
 * and no tool that ran before the interruption run again.
 */
export class AgentsApprovals {
  readonly #mirror: StepMirror;
  readonly #message: AgentsRejectionMessage;
  #parked: Parked | undefined;

  constructor(mirror: StepMirror, message: AgentsRejectionMessage = defaultRejectionMessage) {
    if (typeof message !== 'function')
      throw new InvalidArgumentError(
        'rejectionMessage',
        'a function (decision, call) => the text the model gets for a denied call (undefined: the SDK words it); leave it out for `denied: <reason>`',
        message,
      );
    this.#mirror = mirror;
    this.#message = message;
  }

  /** Whether a run that stops on interruptions parks (the mirror has approval states). */
  get enabled(): boolean {
    return this.#mirror.approvals.enabled;
  }

  /**
   * A `run()` starts with `input`. Resolves true when it continues the parked run (the same run
   * of the mirror), its answers applied to the state; throws, naming what to do, when the run is
   * parked and `input` is not its state, or a waiting call has no answer. Answers given on the
   * state itself (`state.approve(item)` / `state.reject(item)`) are taken as the run's answers.
   */
  async runStarts(input: unknown): Promise<boolean> {
    const parked = this.#parked;
    // A parked run that ended meanwhile (cancelled while it waited): the SDK starts a new run.
    if (parked === undefined || !this.#mirror.running) {
      this.#parked = undefined;
      return false;
    }
    const { approvals, turn } = this.#mirror;
    if (input !== parked.state)
      throw new InvalidArgumentError(
        'input',
        `the RunState from await am.answered(): run ${turn} is parked at the SDK's interruptions, and only its own state continues it (another input would be another run's)`,
        input,
      );
    const onState = approvals.waiting ? this.#answersOnState(parked) : new Set<string>();
    if (approvals.waiting)
      throw new InvalidArgumentError(
        'input',
        `the RunState from await am.answered(), once every waiting call has an answer (run ${turn} waits for approval of ${approvals.pending.map((p) => `${p.name} (${p.callId})`).join(', ')}): answer through am.mirror.approvals.approve / deny, or state.approve / reject`,
        input,
      );
    const decisions = await approvals.answers();
    this.#parked = undefined;
    // Ended while its answers were being kept: the SDK's run is a new run.
    if (decisions === undefined || !this.#mirror.running) return false;
    this.#apply(parked, decisions, onState);
    return true;
  }

  /**
   * The SDK's run ended with `interruptions`: the run parks in AwaitingApproval with their calls.
   * Returns why it cannot (an interruption with no call id, a run not in its tool phase).
   */
  park(interruptions: readonly RunToolApprovalItem[], state: unknown): Error | undefined {
    if (!(state instanceof RunState))
      return new OperationError(
        'the run that stopped for approval',
        new Error(
          'the SDK kept no RunState for it (a session or a server-kept conversation), so no answer could continue it',
        ),
      );
    const items: Parked['items'] = [];
    for (const item of interruptions) {
      const raw = item.rawItem as { callId?: unknown; id?: unknown };
      const id = typeof raw.callId === 'string' ? raw.callId : typeof raw.id === 'string' ? raw.id : undefined;
      if (id === undefined)
        return new InvalidArgumentError('interruptions', 'approval items whose calls have a call id', item.rawItem);
      items.push({ item, call: { id, name: item.name ?? 'tool', input: parseJsonOrText(item.arguments ?? '') } });
    }
    try {
      this.#mirror.awaitApproval(items.map((i) => i.call));
    } catch (error) {
      return error as Error;
    }
    this.#parked = { state: state as AnyState, items };
    return undefined;
  }

  /**
   * Once every waiting call has an answer: the `RunState` to run the agent with (`run(agent,
   * state)` applies the answers to it). Undefined when the run does not wait, or ended meanwhile.
   */
  async answered(): Promise<AnyState | undefined> {
    const parked = this.#parked;
    if (parked === undefined) return undefined;
    const decisions = await this.#mirror.approvals.answers();
    if (this.#parked !== parked || decisions === undefined) return undefined;
    return parked.state;
  }

  /** The answers `state.approve` / `reject` gave the parked calls, given to the mirror's wait: their call ids. */
  #answersOnState({ state, items }: Parked): Set<string> {
    const { approvals } = this.#mirror;
    const taken = new Set<string>();
    for (const { call } of items) {
      if (!approvals.pending.some((p) => p.callId === call.id)) continue;
      const approved = state._context.isToolApproved({ toolName: call.name, callId: call.id });
      if (approved === undefined) continue;
      taken.add(call.id);
      if (approved) approvals.approve(call.id);
      else
        approvals.deny(call.id, state._context.getRejectionMessage(call.name, call.id) ?? 'rejected on the RunState');
    }
    return taken;
  }

  /** The mirror's answers, applied to the SDK's state (those taken from the state are on it already). */
  #apply({ state, items }: Parked, decisions: readonly ApprovalDecision[], onState: Set<string>): void {
    for (const { item, call } of items) {
      const decision = decisions.find((d) => d.callId === call.id);
      if (decision === undefined || onState.has(call.id)) continue;
      if (decision.approved) state.approve(item);
      else {
        const message = this.#message(decision, call);
        state.reject(item, message === undefined ? {} : { message });
      }
    }
  }
}
