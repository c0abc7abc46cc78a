import { InvalidArgumentError } from '../machine/InvalidArgumentError';
import type { ToolCall } from './AgentLoop';

/** A tool call waiting for a person's answer. */
export interface PendingApproval {
  callId: string;
  name: string;
  input?: unknown;
}

/**
 * A person's answer to one approval request; `by` says who gave it, when known (a mirror's
 * `approval` journal line keeps it).
 */
export type ApprovalDecision =
  | { callId: string; approved: true; input?: unknown; by?: string }
  | { callId: string; approved: false; reason: string; by?: string };

/** `{ by }` of an answer's options (who answers), checked: a non-empty string, or left out. */
export function answeredBy(options: { by?: unknown }): { by?: string } {
  const { by } = options;
  if (by === undefined) return {};
  if (typeof by !== 'string' || by === '') throw new InvalidArgumentError('by', 'who answers (a non-empty string)', by);
  return { by };
}

/**
 * Which tool calls wait for a person before they run: tool names mapped to `true`, or a
 * function of the call (its name, id and input) returning whether it waits.
 */
export type ApprovalPolicy = Readonly<Record<string, boolean>> | ((call: ToolCall) => boolean);

/** `approve`, checked: an approval policy, or left out. */
export function assertApprovalPolicy(approve: unknown): asserts approve is ApprovalPolicy | undefined {
  if (approve !== undefined && typeof approve !== 'function' && (typeof approve !== 'object' || approve === null))
    throw new InvalidArgumentError('approve', 'an object { toolName: true } or a function (call) => boolean', approve);
  // An array would pass as an object keyed '0', '1', …: no tool would ever wait.
  if (Array.isArray(approve))
    throw new InvalidArgumentError(
      'approve',
      `an object { toolName: true } or a function (call) => boolean, not an array: write { ${approve.map((n) => `${JSON.stringify(String(n))}: true`).join(', ')} }`,
      approve,
    );
}

/** Whether `call` waits under `policy`. A policy function that throws makes the call wait (fail closed). */
export function needsApproval(policy: ApprovalPolicy, call: ToolCall): boolean {
  if (typeof policy === 'function') {
    try {
      return policy(call) === true;
    } catch {
      return true;
    }
  }
  return Object.hasOwn(policy, call.name) && policy[call.name] === true;
}

/**
 * The approval requests of one response: the calls waiting, the answers given so far, and a
 * promise that settles when every call has one. Answers are taken once per call.
 */
export class ApprovalGate {
  readonly calls: readonly ToolCall[];
  readonly #decisions = new Map<string, ApprovalDecision>();
  readonly answered: Promise<void>;
  #open!: () => void;
  readonly #onDecide: ((decision: ApprovalDecision) => void) | undefined;

  /** `onDecide` is told of each answer as it is taken, before the last one opens the gate (the adapter journals it). */
  constructor(calls: readonly ToolCall[], onDecide?: (decision: ApprovalDecision) => void) {
    this.calls = calls;
    this.#onDecide = onDecide;
    this.answered = new Promise<void>((resolve) => (this.#open = resolve));
  }

  /** The calls still without an answer, in call order. */
  get pending(): PendingApproval[] {
    return this.calls
      .filter((c) => !this.#decisions.has(c.id))
      .map((c) =>
        c.input === undefined ? { callId: c.id, name: c.name } : { callId: c.id, name: c.name, input: c.input },
      );
  }

  /** Whether every call has its answer. */
  get complete(): boolean {
    return this.#decisions.size === this.calls.length;
  }

  /** Whether `callId` is one of this gate's calls. */
  has(callId: string): boolean {
    return this.calls.some((c) => c.id === callId);
  }

  /** Records an answer; the last one opens the gate. Throws for an unknown or already answered call. */
  decide(decision: ApprovalDecision): void {
    const { callId } = decision;
    if (!this.has(callId))
      throw new InvalidArgumentError(
        'callId',
        `the id of a call waiting for approval (${this.calls.map((c) => c.id).join(', ')})`,
        callId,
      );
    if (this.#decisions.has(callId))
      throw new InvalidArgumentError('callId', 'a call not answered yet (it was answered already)', callId);
    this.#decisions.set(callId, decision);
    this.#onDecide?.(decision);
    if (this.complete) this.#open();
  }

  /** The answers, in call order. */
  decisions(): ApprovalDecision[] {
    return this.calls.map((c) => this.#decisions.get(c.id)).filter((d): d is ApprovalDecision => d !== undefined);
  }
}
