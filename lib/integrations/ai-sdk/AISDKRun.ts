import { APICallError, type ModelMessage, type StepResult, type ToolSet } from 'ai';
import {
  InvalidArgumentError,
  type MirroredModelStream,
  type MirrorResponse,
  type StepMirror,
} from 'agent-state-machine';
import { answeredMessages } from './answeredMessages';
import { callBound } from './callBound';
import { lastUserText } from './lastUserText';
import { modelResponseOf, type ModelCallResult } from './modelResponseOf';
import { withFlags, type CallOptions } from './withFlags';
import { approvalRequests, type ApprovalRequest } from './approvalRequests';

/** The hooks of one model's generated calls (`AISDKRun.generatedBy`): made once, not on every call. */
export interface GeneratedCalls<R> {
  /** Read once, when the model is wrapped: an AI SDK model's id is a fixed field. */
  readonly modelId: string | undefined;
  readonly send: (sent: CallOptions) => PromiseLike<R>;
  readonly served: (recorded: MirrorResponse) => R;
  readonly read: (result: R) => MirrorResponse;
  readonly failed: (error: unknown) => void;
}

/**
 * What `mirrorAISDK`'s wrappers keep of a mirror's run beside the mirror: the response messages,
 * the last response's tool calls and text, the model failures in a row, and a streamed response
 * not reported yet. A new run of the mirror (started here, by the SDK's start event, or by a
 * batch) starts these records afresh.
 */
export class AISDKRun {
  /** Response messages of the last finished step (cumulative over the run's steps). */
  #stepMessages: ModelMessage[] = [];
  #lastRun = 0;
  /** The tool calls of the last response, for answering a step that never finished. */
  #lastCalls: Array<{ id: string; name: string; input: unknown }> = [];
  #lastText: string | undefined;
  /** Model failures in a row: the SDK retries a retryable one while there are retries left. */
  #failuresInRow = 0;
  readonly #seen = new WeakSet<object>();
  /** The tool approval requests of the last step (the loop stopped for them): approval id and call. */
  #requests: ApprovalRequest[] = [];
  /** Parked for approval, until the next model attempt: the SDK's start event is the same run's continuation. */
  #afterApproval = false;
  /** A streamed model call whose response is not reported yet: tool calls wait for it. */
  streaming: Promise<void> | undefined;

  constructor(
    readonly mirror: StepMirror,
    readonly maxRetries: number,
  ) {}

  /** The run's response messages, every tool call answered. */
  get messages(): ModelMessage[] {
    const { mirror } = this;
    const result = mirror.turn === this.#lastRun ? mirror.result : undefined;
    return answeredMessages(this.#stepMessages, result, this.#lastCalls, this.#lastText);
  }

  /** Starts this wrapper's records afresh when the mirror's run is a new one. */
  sync(): void {
    if (this.#lastRun === this.mirror.turn) return;
    this.#stepMessages = [];
    this.#lastCalls = [];
    this.#lastText = undefined;
    this.#failuresInRow = 0;
    this.#requests = [];
    this.#waiting = [];
    this.#afterApproval = false;
    this.#lastRun = this.mirror.turn;
  }

  /** Starts a run with the prompt's last user text unless one is running (the text is read only then: every attempt asks). */
  ensureRun(prompt: unknown): void {
    if (!this.mirror.running) this.mirror.runStart(lastUserText(prompt));
    this.sync();
  }

  /**
   * The SDK's start event: a run that went past its first model call without reporting its end
   * is ended in Error by the mirror. After an approval stop it is the same run going on: the
   * answers its messages carry (`tool-approval-response`) are given to the waiting run.
   */
  started(event: unknown): void {
    const e = (event ?? {}) as { prompt?: unknown; messages?: unknown };
    if (this.#afterApproval) {
      if (this.mirror.approvals.waiting) this.#answerFrom(e.messages ?? e.prompt);
      return;
    }
    this.mirror.runStart(typeof e.prompt === 'string' ? e.prompt : lastUserText(e.messages ?? e.prompt));
    this.sync();
  }

  /** A step finished (reported once, under either of the SDK's names): its messages are kept. */
  stepEnded(step: StepResult<ToolSet>): void {
    if (this.#seen.has(step)) return;
    this.#seen.add(step);
    const messages = step.response?.messages;
    if (Array.isArray(messages)) this.#stepMessages = [...messages];
    this.#requests = approvalRequests(step.content);
    this.mirror.stepEnd();
  }

  /** The SDK's end event: the run ends, or, stopped for tool approvals, waits for the answers (AwaitingApproval). */
  finished(event: { text?: string } | undefined): void {
    const { mirror } = this;
    const requests = this.#requests;
    this.#requests = [];
    if (requests.length === 0 || !mirror.running || mirror.approvals.waiting) {
      mirror.runEnd(typeof event?.text === 'string' ? { text: event.text } : {});
      return;
    }
    if (!mirror.approvals.enabled) {
      mirror.runFailed(
        new InvalidArgumentError(
          'approvals',
          `true on the mirror: the SDK stopped for approval of ${requests.map((r) => r.call.name).join(', ')}, and a mirror made without approval states cannot park the run (mirrorAISDK sets it for tools with needsApproval given to it; a batch's mirror has it)`,
          false,
        ),
      );
      return;
    }
    this.#waiting = requests;
    this.#afterApproval = true;
    mirror.awaitApproval(requests.map((r) => r.call));
  }

  /**
   * Once the run that stopped for tool approvals has every answer: the messages to append to the
   * conversation to go on (the last call's response messages, then the tool message of
   * `tool-approval-response` parts). Undefined when it does not wait, or it ended meanwhile.
   */
  async answered(): Promise<ModelMessage[] | undefined> {
    const waiting = this.#waiting;
    if (waiting.length === 0) return undefined;
    const messages = this.#stepMessages;
    const decisions = await this.mirror.approvals.answers();
    // Handed out once: the next call answers the next wait.
    if (this.#waiting === waiting) this.#waiting = [];
    if (decisions === undefined) return undefined;
    const content = decisions.flatMap((d) => {
      const request = waiting.find((r) => r.call.id === d.callId);
      if (request === undefined) return [];
      return [
        {
          type: 'tool-approval-response' as const,
          approvalId: request.approvalId,
          approved: d.approved,
          ...(d.approved ? {} : { reason: d.reason }),
        },
      ];
    });
    // Copied into this realm's objects: the SDK compares an approved call's input with its schema's
    // output by constructor, and the step's messages are a structured clone (another realm's, under a VM).
    return [...(plainCopy(messages) as ModelMessage[]), { role: 'tool', content } as ModelMessage];
  }

  /** The run went on past its approval stop (a model attempt): that wait is over. */
  #wentOn(): void {
    this.#afterApproval = false;
    if (this.#waiting.length > 0) this.#waiting = [];
  }

  /** The approval requests the run waits on. */
  #waiting: ApprovalRequest[] = [];

  /** The answers a continuation's messages carry, given to the waiting run (the rest keep waiting). */
  #answerFrom(prompt: unknown): void {
    const last = Array.isArray(prompt) ? (prompt.at(-1) as { role?: unknown; content?: unknown }) : undefined;
    if (last?.role !== 'tool' || !Array.isArray(last.content)) return;
    const { approvals } = this.mirror;
    for (const part of last.content as Array<Record<string, unknown>>) {
      if (part?.type !== 'tool-approval-response') continue;
      const request = this.#waiting.find((r) => r.approvalId === part.approvalId);
      if (request === undefined || !approvals.pending.some((p) => p.callId === request.call.id)) continue;
      if (part.approved === true) approvals.approve(request.call.id);
      else approvals.deny(request.call.id, typeof part.reason === 'string' ? part.reason : 'denied by a person');
    }
  }

  /**
   * How the generated calls of one model are answered, made once per wrapped model: `send`
   * makes the request, `serve` gives a journaled response back as the model's result.
   */
  generatedBy<R extends ModelCallResult>(
    modelId: string | undefined,
    send: (sent: CallOptions) => PromiseLike<R>,
    serve: (recorded: MirrorResponse) => R,
  ): GeneratedCalls<R> {
    return {
      modelId,
      send,
      served: (recorded) => (this.#kept(recorded), serve(recorded)),
      read: (result) => {
        const response = modelResponseOf(result, modelId);
        this.#kept(response);
        return response;
      },
      failed: (error) => this.failed(error),
    };
  }

  /**
   * One generated (not streamed) model call, through the mirror's one step: a resumed run's
   * journaled response given back by `calls.served`; else planned (the flags it must carry), sent
   * as `calls.send` sends it, and charged.
   */
  generate<R extends ModelCallResult>(o: CallOptions, calls: GeneratedCalls<R>): Promise<R> {
    this.#wentOn();
    this.ensureRun(o.prompt);
    const { modelId, send, served, read, failed } = calls;
    return this.mirror.model({
      served,
      // Worked out only when the mirror needs it (a strict or external dollar cap, the final call's hold).
      bound: (flags) => callBound(withFlags(o, flags), modelId),
      send: (flags) => send(withFlags(o, flags)),
      read,
      failed,
    });
  }

  /**
   * One streamed model call, through the mirror's one step: a resumed run's journaled response
   * given back by `call.serve`; else planned, opened as `call.open` opens it, and each part read
   * as it passes (`call.read`: the call's result once a part makes it whole, or its failure).
   */
  stream<R, P>(
    o: CallOptions,
    modelId: string | undefined,
    call: Pick<MirroredModelStream<R, P>, 'parts' | 'withParts' | 'settled'> & {
      open: (sent: CallOptions) => PromiseLike<R>;
      serve: (recorded: MirrorResponse) => R;
      read: (part: P) => ModelCallResult | { failed: unknown } | undefined;
    },
  ): Promise<R> {
    this.#wentOn();
    this.ensureRun(o.prompt);
    // The SDK retries a stream that failed to open, never one that broke once open.
    let opened = false;
    return this.mirror.modelStream<R, P>({
      served: (recorded) => (this.#kept(recorded), call.serve(recorded)),
      // Worked out only when the mirror needs it (a strict or external dollar cap, the final call's hold).
      bound: (flags) => callBound(withFlags(o, flags), modelId),
      send: async (flags) => {
        const answer = await call.open(withFlags(o, flags));
        opened = true;
        return answer;
      },
      parts: call.parts,
      withParts: call.withParts,
      read: (part) => {
        const read = call.read(part);
        if (read === undefined || 'failed' in read) return read;
        const response = modelResponseOf(read, modelId);
        this.#kept(response);
        return response;
      },
      failed: (error) => this.failed(error, !opened),
      ...(call.settled === undefined ? {} : { settled: call.settled }),
    });
  }

  /** A failed model attempt, reported with whether the SDK retries it (`retried`: it may, when the error is retryable). */
  failed(error: unknown, retried = true): void {
    const { mirror } = this;
    if (!mirror.running) return;
    if (mirror.signal.aborted) {
      mirror.runAborted();
      return;
    }
    this.#failuresInRow += 1;
    const retryable = APICallError.isInstance(error) && error.isRetryable;
    mirror.modelCallFailed(error, { willRetry: retried && retryable && this.#failuresInRow <= this.maxRetries });
  }

  #kept(response: MirrorResponse): void {
    this.#failuresInRow = 0;
    this.#lastCalls = (response.toolCalls ?? []).map((c) => ({ id: c.id, name: c.name, input: c.input }));
    this.#lastText = response.text;
  }
}

/** `value` with its arrays and plain objects copied (other objects kept as they are). Pure. */
function plainCopy(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(plainCopy);
  if (typeof value !== 'object' || value === null) return value;
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== null && (proto as { constructor?: { name?: unknown } }).constructor?.name !== 'Object') return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plainCopy(v)]));
}
