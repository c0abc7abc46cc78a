import { APICallError, type ModelMessage, type StepResult, type ToolSet } from 'ai';
import type { MirrorResponse, StepMirror } from 'agent-state-machine';
import { answeredMessages } from './answeredMessages';
import { callBound } from './callBound';
import { lastUserText } from './lastUserText';
import { modelResponseOf, type ModelCallResult } from './modelResponseOf';
import { withFlags, type CallOptions } from './withFlags';

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
    this.#lastRun = this.mirror.turn;
  }

  /** Starts a run with the prompt's last user text unless one is running (the text is read only then: every attempt asks). */
  ensureRun(prompt: unknown): void {
    if (!this.mirror.running) this.mirror.runStart(lastUserText(prompt));
    this.sync();
  }

  /** The SDK's start event: a run that went past its first model call without reporting its end is ended in Error by the mirror. */
  started(event: unknown): void {
    const e = (event ?? {}) as { prompt?: unknown; messages?: unknown };
    this.mirror.runStart(typeof e.prompt === 'string' ? e.prompt : lastUserText(e.messages ?? e.prompt));
    this.sync();
  }

  /** A step finished (reported once, under either of the SDK's names): its messages are kept. */
  stepEnded(step: StepResult<ToolSet>): void {
    if (this.#seen.has(step)) return;
    this.#seen.add(step);
    const messages = step.response?.messages;
    if (Array.isArray(messages)) this.#stepMessages = [...messages];
    this.mirror.stepEnd();
  }

  /** One model attempt: planned by the mirror (the flags it must carry), then made as `call` sends it. */
  async attempt<R>(
    o: CallOptions,
    modelId: string | undefined,
    call: (sent: CallOptions) => PromiseLike<R>,
  ): Promise<R> {
    this.ensureRun(o.prompt);
    // The bound is only worked out when the mirror needs it (a strict or external dollar cap,
    // the final call's hold), of the call as the flags would send it.
    const planned = await this.mirror.modelCallPlan((flags) => callBound(withFlags(o, flags), modelId));
    if (planned instanceof Error) throw planned;
    try {
      return await call(withFlags(o, planned));
    } catch (error) {
      this.failed(error);
      throw error;
    }
  }

  failed(error: unknown): void {
    const { mirror } = this;
    if (!mirror.running) return;
    if (mirror.signal.aborted) {
      mirror.runAborted();
      return;
    }
    this.#failuresInRow += 1;
    const retryable = APICallError.isInstance(error) && error.isRetryable;
    mirror.modelCallFailed(error, { willRetry: retryable && this.#failuresInRow <= this.maxRetries });
  }

  responded(result: ModelCallResult, modelId: string | undefined): void {
    const response = modelResponseOf(result, modelId);
    this.#kept(response);
    this.mirror.modelResponse(response);
  }

  /** A resumed run: the journaled response of this call, when the mirror serves one (no request is made). */
  recorded(o: CallOptions): MirrorResponse | undefined {
    this.ensureRun(o.prompt);
    const response = this.mirror.recordedResponse();
    if (response !== undefined) this.#kept(response);
    return response;
  }

  #kept(response: MirrorResponse): void {
    this.#failuresInRow = 0;
    this.#lastCalls = (response.toolCalls ?? []).map((c) => ({ id: c.id, name: c.name, input: c.input }));
    this.#lastText = response.text;
  }
}
