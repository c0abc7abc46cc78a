import { BaseCallbackHandler } from '@langchain/core/callbacks/base';
import type { Serialized } from '@langchain/core/load/serializable';
import type { BaseMessage } from '@langchain/core/messages';
import type { LLMResult } from '@langchain/core/outputs';
import type { Command } from '@langchain/langgraph/web';
import {
  InvalidArgumentError,
  StepMirror,
  watchOutputBound,
  type OutputBoundWatch,
  type StateMachine,
  type StateName,
  type LLMCallBound,
  type MirrorResponse,
  type ToolCall,
  type TurnResult,
  type UsageTotals,
} from 'agent-state-machine';
import { chatModelBound, chatModelMaxTokens } from './chatModelBound';
import { unseenRetries } from './callerRetries';
import { mirrorRetries } from './mirrorRetries';
import { describeInterrupts } from './describeInterrupts';
import { LangGraphApprovals, remadeUnwrapped, taskOf } from './LangGraphApprovals';
import type { LangGraphMirrorOptions, LangGraphObserve } from './LangGraphMirrorOptions';
import { lastAiText, messageText, modelResponseOf, userText } from './messageOf';
import { linkSignals } from '../../internal/linkSignals';
import { messageOf } from '../../internal/messageOf';
import { parseJsonOrText } from '../../internal/parseJsonOrText';
import { ServedCalls } from './servedCalls';
import { graphCallbacks } from './graphCallbacks';
import { outsideRunError, runEndedError } from './callRefusals';
import { watchStreamEvent, watchToken } from './watchToken';
import { guardTools } from './guardTools';

/** What `handleChainEnd` and `handleChainError` receive: a graph's output, or its error. */
type ChainValues = Record<string, unknown>;

/**
 * A LangChain callback handler that mirrors a LangGraph run — a prebuilt ReAct agent, or any
 * graph whose nodes call chat models and tools — into the sixteen states: pass it in the run's
 * config (`agent.invoke(input, { callbacks: [mirror], signal: mirror.signal })`), or let `run()`
 * do it. Observing `'wrapped'` (see `LangGraphObserve`), it rides the model and tools it wrapped
 * instead, and the graph runs through `run()` with no handler of its own.
 *
 * Each invoke (or stream) of the graph is one run of the mirror: the root graph's start and end
 * bound it; each chat model call is a model attempt (a retried node, `withRetry` or a node's
 * `retryPolicy`, is another attempt of the same call); each tool call is a tool call of the
 * response that asked for it. Budgets are checked before each model call and each tool call:
 * the handler raises errors (`raiseError`), so a refused call never starts. A refused model
 * call fails the graph with the mirror's error (a `BudgetExceededError`); a refused tool is
 * answered by the ToolNode as an error result, and the model call that would carry it is then
 * refused, so the run ends in BudgetExceeded. A streamed call (`streaming: true`) is cut at the
 * max tokens its chat model states, whether the provider stops there or not: charged at its
 * hold, never retried, the run ends in Error with the fact. A graph that stops at an
 * `interrupt()` ends the run as cancelled (resumed with a `Command`, it is the mirror's next
 * run), or, the mirror made with `approvals: true` (a batch's is), parks it in AwaitingApproval
 * with the calls the interrupts ask about (`LangGraphApprovals`); `answered()` gives the
 * `Command` that continues the same run. `recursionLimit` (GraphRecursionError) and other failures end it in Error with the
 * graph's error.
 */
export class LangGraphMirror extends BaseCallbackHandler {
  name = 'agent-state-machine';
  /** The mirror the graph's events drive: its `machine`, `usage`, `result`. */
  readonly mirror: StepMirror;
  /** Tool runs of LangChain (run id) to their call (the id the model gave it). */
  readonly #tools = new Map<string, ToolCall>();
  /** The approval waits of the mirror's runs: interrupts parked, and their continuation. */
  readonly #approvals: LangGraphApprovals;
  /** Whether the invoke `run()` makes continues a parked run. */
  #continuation = false;
  /** The last model response's tool calls: what a review node's interrupt() is about. */
  #lastCalls: readonly ToolCall[] = [];
  /** Model runs (run id) to their graph task (checkpoint namespace). */
  readonly #modelTasks = new Map<string, string | undefined>();
  #root: string | undefined;
  /** The run this handler saw end; calls LangGraph still makes for it (an aborted graph's tasks finish in the background) are refused. */
  #over = false;
  #interrupt: string | undefined;
  #model: string | undefined;
  /** A resumed run's calls answered from its journal, through the wrapped model and tools. */
  readonly #served = new ServedCalls();
  /** Model runs (run id) that state their max output tokens: a stream is cut there. */
  readonly #watches = new Map<string, OutputBoundWatch>();
  /** Model runs (run id) sent, to the bound their start was gated with: a retry the mirror makes is gated with it again. */
  readonly #bounds = new Map<string, LLMCallBound | string | undefined>();
  /** Whether the model call starting asked to stream (`lc_prefer_streaming`). */
  #streams = false;
  /** Where the mirror hears the graph. */
  readonly observe: LangGraphObserve;
  /** Whether `run()` is invoking the graph: observing only what it wrapped, the mirror hears nothing else. */
  #inRun = false;

  constructor(options: LangGraphMirrorOptions = {}) {
    // raiseError: a refused call must fail, not be logged and made; it implies awaiting each handler.
    super({ raiseError: true });
    if (typeof options !== 'object' || options === null)
      throw new InvalidArgumentError('options', 'an object', options);
    const { observe = 'graph', resumeValue, ...rest } = options;
    if (observe !== 'graph' && observe !== 'wrapped')
      throw new InvalidArgumentError(
        'observe',
        "'graph' (the mirror rides the graph's callbacks) or 'wrapped' (only the model and tools given through wrapModel and wrapTools report)",
        observe,
      );
    this.observe = observe;
    if (observe === 'wrapped') this.#served.reportTo = this;
    this.#served.retriesFor = (runId, retries, signal) =>
      mirrorRetries(this.mirror, (bound) => this.#gate(bound), this.#bounds, runId, retries, signal);
    this.mirror = StepMirror.fromOptions(rest, 'new LangGraphMirror()', {
      cannot: {
        'budget.wrapUp':
          "LangGraph's callbacks see a chat model call but cannot change its request (its tools, its messages), and the graph's edges decide which node runs next, so the mirror cannot make a final call with no tools; end the graph with its `recursionLimit`",
        'budget.visible':
          "LangGraph's callbacks see a chat model call but cannot change its messages, so no note can be added",
      },
    });
    this.#approvals = new LangGraphApprovals(this.mirror, resumeValue);
  }

  /**
   * Once the run parked at an `interrupt()` has an answer for each waiting call (given to
   * `mirror.approvals`, or by a batch's `onApproval` or `agent-sm approve|deny`): the
   * `Command({ resume })` to run the graph with, on the same thread, to continue the same run.
   * Undefined when the run does not wait, or ended meanwhile (cancelled while it waited).
   */
  answered(): Promise<Command<unknown, never, never> | undefined> {
    return this.#approvals.answered();
  }

  /**
   * The chat model to give the graph, so that a resumed run (`resumeFrom`, or a batch's
   * `resume`) is answered from its journal with no request for every response recorded before
   * the cut. A callback handler cannot answer for a model: without this, a resumed run starts
   * its calls again (and pays for them again). Every other call goes to `model` as it is.
   * Observing `'wrapped'`, the model also reports its calls to the mirror, as its own callback.
   *
   * A `ChatOpenAI`'s own retries (its AsyncCaller's `maxRetries`, 6 by default) are the
   * mirror's: each request goes with `maxRetries: 0`, and each retry the model would have made
   * is made here, the failed request charged by its status and the retry gated as an attempt.
   * Throws, naming the setting, for a model whose retries cannot be turned off: a `ChatOpenAI`
   * with `configuration.maxRetries`, or another provider's model sending through LangChain's
   * AsyncCaller with `maxRetries` above 0 (construct it with `maxRetries: 0`). Observing
   * `'graph'`, a `ChatOpenAI` the graph calls unwrapped must have `maxRetries: 0`, or is refused.
   */
  wrapModel<M>(model: M): M {
    return this.#served.wrapModel(model);
  }

  /**
   * The tools to give the graph, so that a resumed run's recorded tool results are served by the
   * `resumeTools` policy instead of running the tools again. Every other call runs the tool.
   * Observing `'wrapped'`, the tools also report their calls to the mirror (`wrapTools([])` for a
   * graph with none). A call the mirror's `approve` policy names interrupts before its tool runs.
   */
  wrapTools<T>(tools: readonly T[]): T[] {
    return this.#served.wrapTools(guardTools(tools, this.mirror.approvals));
  }

  /**
   * LangChain streams a chat model call through its streaming path when a handler prefers it;
   * this one does when the model itself asked to stream (`streaming: true`). Otherwise ChatOpenAI
   * streams inside its `_generate` and then estimates the tokens with a tokenizer it downloads,
   * which takes minutes without a network; the streaming path takes the usage the stream
   * reports. Read by LangChain right after `handleChatModelStart`.
   */
  get lc_prefer_streaming(): boolean {
    return this.#streams;
  }

  /** Give it to the graph (`config.signal`): `cancel()` and a passed `maxWallMs` abort the run through it. */
  get signal(): AbortSignal {
    return this.mirror.signal;
  }

  get machine(): StateMachine<StateName> {
    return this.mirror.machine;
  }

  get usage(): UsageTotals {
    return this.mirror.usage;
  }

  /** How the last run ended, once it has. */
  get result(): TurnResult | undefined {
    return this.mirror.result;
  }

  /** Cancels the running run: its signal aborts, and it ends as `cancelled`. */
  cancel(reason = 'cancelled by the caller'): boolean {
    return this.mirror.cancel(reason);
  }

  /**
   * Invokes `graph` (a compiled graph, a prebuilt agent, any runnable) with this handler and the
   * mirror's signal added to `config`, and ends the mirror's run when the invoke settles, even
   * where LangGraph reports no end of its root run (an aborted invoke rejects without one).
   */
  async run<I, O>(
    graph: { invoke(input: I, config?: Record<string, unknown>): Promise<O> },
    input: I,
    config: Record<string, unknown> = {},
  ): Promise<O> {
    if (typeof graph?.invoke !== 'function')
      throw new InvalidArgumentError('graph', 'a graph or runnable with invoke(input, config)', graph);
    if (typeof config !== 'object' || config === null)
      throw new InvalidArgumentError('config', 'a LangChain RunnableConfig object', config);
    const callbacks = graphCallbacks(config.callbacks, this, this.#served);
    const user = config.signal;
    if (user !== undefined && !(user instanceof AbortSignal))
      throw new InvalidArgumentError('config.signal', 'an AbortSignal', user);
    this.#continuation = this.#approvals.graphStarts(input);
    if (!this.mirror.running) this.mirror.runStart(userText(input));
    // The caller's signal cancels the mirror's run, so that every handler sees the run cancelled
    // (not the graph failed) whichever of them hears of it first.
    const cancel = user === undefined ? undefined : this.#cancelFrom.bind(this, user);
    if (user?.aborted === true) this.#cancelFrom(user);
    else if (cancel !== undefined) user!.addEventListener('abort', cancel);
    // A signal of this run's own, taken once the run started (a run after a cancelled one gets a
    // fresh signal): LangGraph leaves an abort listener on the signal it is given at every
    // invoke, which on the mirror's (or the caller's) would pile up run after run.
    const controller = new AbortController();
    const unlink = linkSignals(controller, [this.signal]);
    const { signal } = controller;
    this.#over = false;
    this.#interrupt = undefined;
    this.#tools.clear();
    this.#served.runStarts();
    this.#bounds.clear();
    this.#inRun = true;
    try {
      const output = await graph.invoke(input, {
        ...config,
        ...(callbacks === undefined ? {} : { callbacks }),
        signal,
      });
      // LangGraph may resolve without reporting its root run's end (its signal aborted meanwhile); a parked run's end was reported.
      if (this.mirror.running && !this.#over) this.#finish(output as ChainValues);
      return output;
    } catch (error) {
      if (this.mirror.running) {
        this.#root = undefined;
        if (this.mirror.signal.aborted || signal.aborted) this.mirror.runAborted(signal.reason);
        else this.mirror.runFailed(error);
      }
      this.#over = true;
      throw error;
    } finally {
      this.#inRun = false;
      unlink();
      if (cancel !== undefined) user!.removeEventListener('abort', cancel);
    }
  }

  #cancelFrom(user: AbortSignal): void {
    const reason: unknown = user.reason;
    this.mirror.cancel(typeof reason === 'string' ? reason : `aborted by the caller's signal: ${messageOf(reason)}`);
  }

  override handleChainStart(_chain: Serialized, inputs: ChainValues, runId: string, parentRunId?: string): void {
    if (parentRunId !== undefined || this.#root !== undefined) return;
    this.#root = runId;
    this.#over = false;
    this.#interrupt = undefined;
    this.#tools.clear();
    this.#served.runStarts();
    this.#bounds.clear();
    // A parked run's continuation (Command({ resume })) is the same run.
    if (this.#inRun ? this.#continuation : this.#approvals.graphStarts(inputs)) return;
    if (this.mirror.running) {
      // Started already, by run() or a batch, before the graph's own start: the same run.
      if (this.machine.pendingState === 'WaitingForUserInput') return;
      // An aborted invoke LangGraph never reported the end of (run() reports it): it ends here, cancelled.
      if (this.mirror.signal.aborted) this.mirror.runAborted();
    }
    this.mirror.runStart(userText(inputs));
  }

  override handleChainEnd(outputs: ChainValues, runId: string): void {
    if (runId !== this.#root) return;
    this.#finish(outputs);
  }

  /** The graph's run ended with `outputs`: stopped at an interrupt, aborted, or done. */
  #finish(outputs: ChainValues | undefined): void {
    this.#root = undefined;
    this.#over = true;
    if (!this.mirror.running) return;
    const interrupts = (outputs as { __interrupt__?: unknown } | undefined)?.__interrupt__;
    const stoppedAt = this.#approvals.enabled ? this.#approvals.stoppedAt(outputs) : [];
    if (stoppedAt.length > 0) {
      const refused = this.#approvals.park(stoppedAt, this.#lastCalls);
      if (refused !== undefined) this.mirror.runFailed(refused);
      return;
    }
    if (this.#interrupt !== undefined || (Array.isArray(interrupts) && interrupts.length > 0)) {
      this.mirror.runAborted(`interrupted: ${this.#interrupt ?? describeInterrupts(interrupts)}`);
      return;
    }
    if (this.mirror.signal.aborted) {
      this.mirror.runAborted(this.mirror.signal.reason);
      return;
    }
    this.mirror.runEnd({ text: lastAiText(outputs) });
  }

  override handleChainError(error: Error, runId: string): void {
    if (error?.name === 'GraphInterrupt') this.#approvals.heard((error as { interrupts?: unknown }).interrupts);
    if (runId !== this.#root) return;
    this.#root = undefined;
    this.#over = true;
    if (this.mirror.signal.aborted) this.mirror.runAborted(this.mirror.signal.reason);
    else this.mirror.runFailed(error);
  }

  override async handleChatModelStart(
    llm: Serialized,
    messages: BaseMessage[][],
    runId: string,
    _parentRunId?: string,
    extraParams?: Record<string, unknown>,
    _tags?: string[],
    metadata?: Record<string, unknown>,
  ): Promise<void> {
    const params = extraParams?.invocation_params as Record<string, unknown> | undefined;
    const model = params?.model ?? params?.model_name;
    this.#model = typeof model === 'string' ? model : undefined;
    this.#streams = params?.stream === true;
    if (this.#over) throw runEndedError(this.mirror);
    const outside = outsideRunError(this.observe, this.#inRun);
    if (outside !== undefined) throw outside;
    const task = taskOf(metadata);
    // A parked run's continuation: a node re-run from its start makes again the call it made
    // before its interrupt(), answered from the journal with the response it had (no request, no charge).
    const again = this.#approvals.remade(task);
    if (again !== undefined) {
      if (!this.#served.modelWrapped) throw remadeUnwrapped(task);
      const response = this.mirror.recordedResponse({ again });
      if (response !== undefined) return this.#served.serveResponse(runId, response);
    }
    // A resumed run: the wrapped model answers with the journaled response (no request, no budget check: it was made and paid then).
    if (this.#served.modelWrapped) {
      const response = this.mirror.recordedResponse();
      if (response !== undefined) {
        this.#served.serveResponse(runId, response);
        this.#responded(task, response);
        return;
      }
    }
    this.#modelTasks.set(runId, task);
    // A chat model whose caller retries where the mirror cannot see (not given through wrapModel) is refused.
    const unseen = unseenRetries(llm, metadata);
    if (unseen !== undefined) throw unseen;
    // The bound is only worked out when a strict (or external dollar) cap needs it.
    const bound = this.mirror.needsBound ? chatModelBound(messages, params, metadata, this.#model) : undefined;
    await this.#gate(bound);
    this.#bounds.set(runId, bound);
    this.#served.modelSent(runId);
    const max = chatModelMaxTokens(params, metadata);
    if (typeof max === 'number' && Number.isSafeInteger(max) && max >= 0)
      this.#watches.set(runId, watchOutputBound(max, NEVER));
  }

  /** Gates a model attempt with `bound`: throws the mirror's stop when it is refused. */
  async #gate(bound: LLMCallBound | string | undefined): Promise<void> {
    const stop = await (typeof bound === 'string'
      ? this.mirror.modelCallStart(undefined, bound)
      : this.mirror.modelCallStart(bound));
    if (stop !== undefined) throw stop;
  }

  /**
   * A streamed token: counted against the call's max output tokens, whether the server stops
   * there or not. Past it, this throws `StreamCutError`; LangChain raises it in the chat model's
   * stream (the handler raises errors), which ends the stream and its request, and reports it to
   * `handleLLMError`: the attempt is charged at its hold and not retried.
   */
  override handleLLMNewToken(
    token: string,
    _idx: unknown,
    runId: string,
    _parentRunId?: string,
    _tags?: string[],
    fields?: unknown,
  ): void {
    const watch = this.#watches.get(runId);
    if (watch !== undefined) watchToken(watch, token, fields);
  }

  /** A chat model stream event (where LangChain streams events instead of tokens): counted and cut as a token is. */
  override handleChatModelStreamEvent(event: unknown, runId: string): void {
    const watch = this.#watches.get(runId);
    if (watch !== undefined) watchStreamEvent(watch, event);
  }

  override handleLLMEnd(output: LLMResult, runId: string): void {
    this.#watches.delete(runId);
    this.#bounds.delete(runId);
    const task = this.#modelTasks.get(runId);
    this.#modelTasks.delete(runId);
    if (this.#served.ended(runId)) return;
    const response = modelResponseOf(output, this.#model);
    // The run ended at the response (a policy its tools do not carry): the graph must not run them.
    const stop = this.mirror.modelResponse(response);
    if (stop !== undefined) throw stop;
    this.#responded(task, response);
  }

  /** A response the run had (sent, or served from the journal): its number noted for a re-run of its task, and its calls for an interrupt. */
  #responded(task: string | undefined, response: MirrorResponse): void {
    this.#lastCalls = response.toolCalls ?? [];
    this.#approvals.responded(task, this.mirror.callsAnswered);
  }

  override handleLLMError(error: unknown, runId: string): void {
    this.#modelTasks.delete(runId);
    this.#watches.delete(runId);
    this.#bounds.delete(runId);
    if (this.#served.ended(runId)) return;
    this.mirror.modelCallFailed(error, {});
  }

  override async handleToolStart(
    _tool: Serialized,
    input: string,
    runId: string,
    _parentRunId?: string,
    _tags?: string[],
    metadata?: Record<string, unknown>,
    runName?: string,
    toolCallId?: string,
  ): Promise<void> {
    if (this.#over) throw runEndedError(this.mirror);
    const outside = outsideRunError(this.observe, this.#inRun);
    if (outside !== undefined) throw outside;
    const id = toolCallId ?? runId;
    // The name the model gave the call: a tool LangGraph sends as its own task runs under the node's name.
    const name = this.#lastCalls.find((c) => c.id === id)?.name ?? runName ?? 'tool';
    const call = { id, name, input: parseJsonOrText(input) };
    // A resumed run whose journal holds this call's question (asked, or answered): the tool asks again, and its wait takes the answer or parks again.
    const asks = this.#approvals.asksAgain(id);
    // A resumed run: the wrapped tool answers with its recorded result, by the tool policy, and does not run.
    if (this.#served.toolsWrapped && !asks) {
      const answer = this.mirror.recordedTool(call);
      if (answer !== undefined) {
        this.#served.serveTool(runId, answer);
        return;
      }
    }
    // A parked run's continuation: an answered call's tool starts again (or for the first time).
    this.#approvals.toolStarts(id, metadata);
    const restart = this.#approvals.toolRestarts(id);
    if (restart === 'denied') return;
    this.#tools.set(runId, call);
    if (restart === 'counted' || asks) return;
    const stop = await this.mirror.toolStart(call);
    if (stop !== undefined) throw stop;
  }

  override handleToolEnd(output: unknown, runId: string): void {
    if (this.#served.ended(runId)) return;
    const id = this.#tools.get(runId)?.id;
    if (id === undefined) return;
    this.#tools.delete(runId);
    const status = (output as { status?: unknown } | undefined)?.status;
    this.mirror.toolEnd(id, { output: messageText(output), isError: status === 'error' });
  }

  override handleToolError(error: unknown, runId: string): void {
    if (this.#served.ended(runId)) return;
    const call = this.#tools.get(runId);
    if (call === undefined) return;
    const { id } = call;
    this.#tools.delete(runId);
    // An interrupt() inside a tool stops the graph: the tool is answered when the run resumes.
    if ((error as { name?: unknown } | undefined)?.name === 'GraphInterrupt') {
      // Parked, the call waits for approval: the tool starts again on the continuation.
      if (this.#approvals.enabled)
        return this.#approvals.toolInterrupted((error as { interrupts?: unknown }).interrupts, call);
      this.#interrupt = describeInterrupts((error as { interrupts?: unknown }).interrupts);
      this.mirror.toolEnd(id, { output: `interrupted: ${this.#interrupt}`, isError: true });
      return;
    }
    this.mirror.toolEnd(id, { error });
  }
}

/** A signal that never aborts: a cut throws from the token callback, which ends the model's stream. */
const NEVER = new AbortController().signal;

/** Makes a `LangGraphMirror`. */
export function langGraphMirror(options: LangGraphMirrorOptions = {}): LangGraphMirror {
  return new LangGraphMirror(options);
}
