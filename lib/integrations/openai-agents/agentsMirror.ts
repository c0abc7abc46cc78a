// Past 400 lines: the SDK's pieces (model, tools, handoffs, runs) wrap in one class, sharing a run's abort
// controller, the refusal that stopped it and its last response's handoff calls (pure reading: responseOf.ts).
import {
  Agent,
  handoff as sdkHandoff,
  Handoff,
  Runner,
  RunState,
  type AgentInputItem,
  type FunctionTool,
  type Model,
  type ModelProvider,
  type ModelRequest,
  type ModelResponse,
  type NonStreamRunOptions,
  type StreamEvent,
  type RunResult,
  type StreamedRunResult,
  type StreamRunOptions,
  type Tool,
} from '@openai/agents';
import {
  BudgetExceededError,
  InvalidArgumentError,
  OperationError,
  StepMirror,
  StreamCutError,
  TurnCancelledError,
  TurnInProgressError,
  watchOutputBound,
  type MirrorResponse,
  type MirrorStop,
  type OutputBoundWatch,
  type StateMachine,
  type StateName,
  type StepMirrorOptions,
  type ToolCall,
  type TurnResult,
  type UsageTotals,
} from 'agent-state-machine';
import { messageOf } from '../../internal/messageOf';
import { parseJsonOrText } from '../../internal/parseJsonOrText';
import { inputText } from './inputText';
import { linkSignals } from '../../internal/linkSignals';
import { requestBound } from './requestBound';
import { recordedModelResponse, recordedStreamEvents } from './recordedModelResponse';
import { responseOf, type AgentsModelOutput } from './responseOf';
import { watchEvent } from './watchEvent';
import { clientWouldRetry, retriesFor, withoutClientRetries } from './sdkRetries';
import { retriedAsClient, streamRetriedAsClient, type ClientRetries } from '../../internal/clientRetries';
import { withState, type AnyState } from './runStateOf';
import { sdkRunFailed, sdkRunFinished } from './sdkRunEnded';
import { stateForRun } from './stateForRun';
import { toolText } from './toolText';
import { AgentsApprovals, type AgentsRejectionMessage } from './AgentsApprovals';

/* eslint-disable @typescript-eslint/no-explicit-any -- any context and output type: a mirror wraps every agent of a run */
type AnyAgent = Agent<any, any>;
type AnyFunctionTool = FunctionTool<any, any, any>;
type AnyTool = Tool<any>;
type AnyHandoff = Handoff<any, any>;
type NonStreamOptions = NonStreamRunOptions<any>;
type StreamOptions = StreamRunOptions<any>;
type AnyRunResult = RunResult<any, AnyAgent>;
type AnyStreamedResult = StreamedRunResult<any, AnyAgent>;
/* eslint-enable @typescript-eslint/no-explicit-any */

/** Options of `agentsMirror(options)`: a `StepMirror`'s (budgets, pricing, sink, journal, clock, signal) plus how to find models named by string. */
export interface AgentsMirrorOptions extends StepMirrorOptions {
  /** Resolves an agent's `model` given by name (or none). Default: the SDK's default provider (OpenAI, from `OPENAI_API_KEY`). */
  modelProvider?: ModelProvider;
  /** The `Runner` that `run()` uses. Default: a new one with `modelProvider`. */
  runner?: Runner;
  /** With `approvals: true`: the text the model gets for a denied call (default `denied: <reason>`; undefined: the SDK's own). */
  rejectionMessage?: AgentsRejectionMessage;
}

/** The state of one `run()`: the signal the SDK gets, and the handoff calls of the last response not yet run. */
interface ActiveRun {
  controller: AbortController;
  /** Why the mirror refused a call, when it did: the SDK's run then stops with it. */
  refused?: MirrorStop;
  pendingCalls: ToolCall[];
  handoffs: number;
}

/**
 * Puts an OpenAI Agents SDK run (`@openai/agents`) on the sixteen states, with budgets and a
 * history: `run(agent, input)` runs the agent as the SDK's `run()` does, with its model, function
 * tools and handoffs wrapped so that every model attempt, tool call and handoff is a move of one
 * run of the mirror, and a spent budget stops the run before the call that would pass it. A
 * streamed model call (`stream: true`) is cut at the agent's `modelSettings.maxTokens`, whether
 * the provider stops there or not: charged at its hold, never retried, the run ends in Error.
 *
 * A stopped run keeps the SDK's own `RunState`: `run()` rejects with the mirror's error (a
 * `BudgetExceededError`, a `TurnCancelledError`) or the SDK's, and `runStateOf(error)` gives the
 * state to resume from — `run(agent, state)` once the budget is raised — with no call lost or
 * repeated: a model call that was refused is made on resume; a tool call that was refused is
 * answered `aborted`, as the SDK answers any aborted tool.
 *
 * Stopped on interruptions (tools with `needsApproval`), the run parks in AwaitingApproval when
 * the mirror has `approvals: true` (a batch's has), the waiting calls in the move's data;
 * answered (`mirror.approvals`, a batch's `onApproval`, `agent-sm approve|deny`),
 * `await answered()` gives the `RunState` that `run(agent, state)` continues the same run with.
 * Without approval states it ends as cancelled (`paused for approval of …`).
 */
export class AgentsMirror {
  /** The mirror the run's events drive: its `machine`, `usage`, `result`. */
  readonly mirror: StepMirror;
  readonly #provider: ModelProvider;
  readonly #runner: Runner;
  readonly #approvals: AgentsApprovals;
  readonly #wrapped = new WeakMap<AnyAgent, AnyAgent>();
  readonly #ours = new WeakSet<AnyAgent>();
  #run: ActiveRun | undefined;
  /** Tool calls the SDK gave no call id (a tool invoked outside a model response). */
  #unnamed = 0;

  constructor(
    options:
      | AgentsMirrorOptions
      | {
          mirror: StepMirror;
          modelProvider?: ModelProvider;
          runner?: Runner;
          rejectionMessage?: AgentsRejectionMessage;
        } = {},
  ) {
    if (typeof options !== 'object' || options === null)
      throw new InvalidArgumentError('options', 'an object', options);
    const { modelProvider, runner, rejectionMessage, ...rest } = options as AgentsMirrorOptions & {
      mirror?: StepMirror;
    };
    if (modelProvider !== undefined && typeof (modelProvider as ModelProvider)?.getModel !== 'function')
      throw new InvalidArgumentError('modelProvider', 'a ModelProvider (an object with getModel(name))', modelProvider);
    if (runner !== undefined && !(runner instanceof Runner))
      throw new InvalidArgumentError('runner', "a Runner from '@openai/agents'", runner);
    this.mirror = StepMirror.fromOptions(rest, 'new AgentsMirror()', {
      cannot: {
        'budget.wrapUp':
          "the Agents SDK's Runner decides from each model response whether its run goes on (tool calls, handoffs, the agent's `outputType` and `toolUseBehavior`), so a call the mirror turned into a final one with no tools is not sure to end the run with its answer; end it with the Runner's `maxTurns`",
        'budget.visible':
          "the Agents SDK's Runner builds each request from the agent and the run's items, and the mirror sees the model call only to check and record it, so no note can be added",
      },
    });
    this.#approvals = new AgentsApprovals(this.mirror, rejectionMessage);
    this.#runner = runner ?? new Runner(modelProvider === undefined ? {} : { modelProvider });
    // The runner's provider resolves names as the SDK would (its default is lazy: no API key needed until used).
    this.#provider = modelProvider ?? this.#runner.config.modelProvider;
  }

  /** The machine the runs move. */
  get machine(): StateMachine<StateName> {
    return this.mirror.machine;
  }

  /** Usage over all runs. */
  get usage(): UsageTotals {
    return this.mirror.usage;
  }

  /** How the last run ended, once it has. */
  get result(): TurnResult | undefined {
    return this.mirror.result;
  }

  /**
   * Once the run parked at the SDK's interruptions has an answer for each waiting call: the SDK's
   * `RunState` to continue the same run with, `run(agent, state)` (the same history file, budget
   * and run id), which applies the answers to it. Undefined when the run does not wait, or ended
   * meanwhile (cancelled while it waited).
   */
  answered(): Promise<AnyState | undefined> {
    return this.#approvals.answered();
  }

  /** Cancels the running run: its signal aborts (a running tool gets it) and it ends as `cancelled`. */
  cancel(reason = 'cancelled by the caller'): boolean {
    return this.mirror.cancel(reason);
  }

  /**
   * `agent` with its model, function tools and handoffs (and theirs, to any depth) reporting to
   * this mirror: a clone, the original is left as it is. The same agent gives the same clone.
   */
  agent<A extends AnyAgent>(given: A): A {
    if (!(given instanceof Agent)) throw new InvalidArgumentError('agent', "an Agent from '@openai/agents'", given);
    if (this.#ours.has(given)) return given;
    // Another mirror's clone (a RunState stopped under one mirror, resumed under another) wraps from its original.
    const agent = (ORIGINALS.get(given) ?? given) as A;
    const known = this.#wrapped.get(agent);
    if (known !== undefined) return known as A;
    const clone = agent.clone({ model: this.model(agent.model), tools: this.tools(agent.tools) }) as A;
    this.#wrapped.set(agent, clone);
    this.#ours.add(clone);
    ORIGINALS.set(clone, agent);
    // After the memo, so that agents handing off to each other wrap once.
    clone.handoffs = agent.handoffs.map((h) => this.#handoff(h, agent.name));
    return clone;
  }

  /** A `Model` that reports each attempt to the mirror and asks it first; `model` by name resolves through the provider. */
  model(model: Model | string | undefined): Model {
    if (typeof model === 'object' && model !== null) model = (ORIGINALS.get(model) ?? model) as Model;
    let inner: Model | undefined = typeof model === 'object' && model !== null ? model : undefined;
    if (model !== undefined && typeof model !== 'string' && inner === undefined)
      throw new InvalidArgumentError('model', 'a Model or a model name', model);
    const name =
      typeof model === 'string' && model !== ''
        ? model
        : typeof (inner as { _model?: unknown } | undefined)?._model === 'string'
          ? (inner as unknown as { _model: string })._model
          : undefined;
    const resolve = async (): Promise<Model> =>
      (inner ??= await this.#provider.getModel(typeof model === 'string' && model !== '' ? model : undefined));
    const wrapped: Model = {
      getResponse: (request: ModelRequest): Promise<ModelResponse> => {
        let target!: Model;
        return this.mirror.model({
          served: (recorded) => this.#served(recorded),
          // Resolved before the call is gated, and only when it is not served: a model the provider cannot give was never sent.
          prepare: async () => void (target = await resolve()),
          bound: () => requestBound(request, name),
          send: () => {
            // The client's own retries are off: each retry it would make is made here, gated and charged.
            const retries = this.#retries(target, request, name);
            const sent = retries.retries > 0 ? withoutClientRetries(request) : request;
            return retriedAsClient(() => target.getResponse(sent), retries);
          },
          read: (response) => this.#read(response, name),
          refuse: (stop) => this.#refuse(stop),
        });
      },
      getStreamedResponse: (request: ModelRequest) => this.#stream(resolve, request, name),
      getRetryAdvice(args) {
        // A call the mirror refused, or cut at its bound, is never retried: the run has ended.
        if (isMirrorStop(args.error) || args.error instanceof StreamCutError)
          return { suggested: false, reason: messageOf(args.error) };
        return inner?.getRetryAdvice?.(args);
      },
    };
    if (typeof model === 'object' && model !== null) ORIGINALS.set(wrapped, model);
    return wrapped;
  }

  /** Function tools that ask the mirror before they run (and for approval, under its `approve` policy too) and report how they ended. */
  tools<T extends readonly AnyTool[]>(tools: T): T {
    if (!Array.isArray(tools)) throw new InvalidArgumentError('tools', 'an array of Agents SDK tools', tools);
    return tools.map((t: AnyTool) => (t.type === 'function' ? this.#tool(t) : t)) as unknown as T;
  }

  /**
   * Runs `agent` as the SDK's `run()` does (the same options; `stream: true` gives the
   * `StreamedRunResult`), as one run of the mirror. `input` may be a `RunState` to resume.
   * Rejects with the reason the run stopped; `runStateOf(error)` is the state to resume from.
   */
  run(agent: AnyAgent, input: string | AgentInputItem[] | AnyState, options: StreamOptions): Promise<AnyStreamedResult>;
  run(agent: AnyAgent, input: string | AgentInputItem[] | AnyState, options?: NonStreamOptions): Promise<AnyRunResult>;
  async run(
    agent: AnyAgent,
    input: string | AgentInputItem[] | AnyState,
    options: NonStreamOptions | StreamOptions = {},
  ): Promise<AnyRunResult | AnyStreamedResult> {
    // One run at a time per mirror: make a mirror per concurrent run.
    const continuing = await this.#approvals.runStarts(input);
    if (this.#run !== undefined) throw new TurnInProgressError(this.mirror.turn, this.machine.current);
    const wrapped = this.agent(agent);
    const state = stateForRun(wrapped, input, options, (a) => this.agent(a));
    const controller = new AbortController();
    const active: ActiveRun = { controller, pendingCalls: [], handoffs: 0 };
    this.#run = active;
    // Started first: a run after a cancelled one gets the mirror's fresh signal.
    if (!continuing) this.mirror.runStart(input instanceof RunState ? '' : inputText(input));
    // A cancel's reason reaches the SDK as an error object, so that the rejection can carry the state.
    const unlink = linkSignals(controller, [this.mirror.signal, options.signal], (reason) =>
      typeof reason === 'object' && reason !== null
        ? reason
        : new TurnCancelledError(reason === undefined ? 'cancelled' : String(reason), this.machine.pendingState),
    );
    const sdkOptions = { ...options, signal: controller.signal };
    const finish = (): void => {
      unlink();
      if (this.#run === active) this.#run = undefined;
    };
    if (options.stream === true) {
      let streamed: AnyStreamedResult;
      try {
        streamed = await this.#runner.run(wrapped, state, sdkOptions as StreamOptions);
      } catch (error) {
        sdkRunFailed(this.mirror, this.#run?.refused, error, controller);
        finish();
        throw withState(error, state);
      }
      void streamed.completed.then(
        () => {
          if (streamed.error !== undefined && streamed.error !== null)
            sdkRunFailed(this.mirror, this.#run?.refused, streamed.error, controller);
          // The SDK ends a streamed run whose signal aborted as cancelled, not as failed.
          else if (streamed.cancelled)
            sdkRunFailed(
              this.mirror,
              this.#run?.refused,
              controller.signal.reason ?? 'the stream was cancelled',
              controller,
            );
          else sdkRunFinished(this.mirror, this.#approvals, streamed);
          finish();
        },
        (error: unknown) => {
          sdkRunFailed(this.mirror, this.#run?.refused, error, controller);
          withState(error, streamed.state);
          finish();
        },
      );
      return streamed;
    }
    try {
      const result = await this.#runner.run(wrapped, state, sdkOptions as NonStreamOptions);
      sdkRunFinished(this.mirror, this.#approvals, result);
      return result;
    } catch (error) {
      sdkRunFailed(this.mirror, this.#run?.refused, error, controller);
      throw withState(error, state);
    } finally {
      finish();
    }
  }

  /** A resumed run's journaled response, as the SDK's `Model` returns one (no request is made, and the mirror has reported it). */
  #served(response: MirrorResponse): ModelResponse {
    if (this.#run !== undefined) this.#run.pendingCalls = [...(response.toolCalls ?? [])];
    return recordedModelResponse(response, this.mirror.resumed?.recordedCalls ?? 0);
  }

  async *#stream(resolve: () => Promise<Model>, request: ModelRequest, name: string | undefined) {
    let target!: Model;
    let watch: OutputBoundWatch | undefined;
    const events = await this.mirror.modelStream<AsyncIterable<StreamEvent>, StreamEvent>({
      served: (recorded) => recordedStreamEvents(this.#served(recorded)),
      prepare: async () => void (target = await resolve()),
      bound: () => requestBound(request, name),
      send: async () => {
        const retries = this.#retries(target, request, name);
        const sent = retries.retries > 0 ? withoutClientRetries(request) : request;
        // The stream is cut at the request's max tokens, whether the server stops there or not:
        // what it may bill stays within the call's hold. The cut is charged at the hold, not retried.
        const max = request.modelSettings?.maxTokens;
        const bound = watchOutputBound(
          typeof max === 'number' && Number.isSafeInteger(max) && max >= 0 ? max : undefined,
          request.signal ?? NEVER,
        );
        watch = bound;
        // Retried here as the client would, while no event has come: the client's own retries are off.
        return streamRetriedAsClient(() => target.getStreamedResponse({ ...sent, signal: bound.signal }), retries);
      },
      parts: (stream) => stream,
      withParts: (_, parts) => parts,
      read: (event) => {
        if ((event as { type?: unknown }).type === 'response_done')
          return this.#read((event as unknown as { response: AgentsModelOutput }).response, name);
        watchEvent(watch!, event);
        return undefined;
      },
      refuse: (stop) => this.#refuse(stop),
      settled: () => watch?.release(),
    });
    yield* events;
  }

  /** The client's retries of a request to `target`, made here: each failed request charged by its status, each retry gated as an attempt. */
  #retries(target: Model, request: ModelRequest, name: string | undefined): ClientRetries {
    return {
      retries: retriesFor(target, request),
      wouldRetry: (error, retry) => clientWouldRetry(target, request, error, retry),
      failed: (error, delayMs) => this.mirror.modelCallFailed(error, { willRetry: true, delayMs }),
      gate: () => this.#beforeModel(request, name),
      ...(request.signal === undefined ? {} : { signal: request.signal }),
    };
  }

  async #beforeModel(request: ModelRequest, model: string | undefined): Promise<void> {
    // The bound is only worked out when a strict (or external dollar) cap needs it.
    const bound = this.mirror.needsBound ? requestBound(request, model) : undefined;
    const stop = await (typeof bound === 'string'
      ? this.mirror.modelCallStart(undefined, bound)
      : this.mirror.modelCallStart(bound));
    if (stop !== undefined) this.#refuse(stop);
  }

  /** What the mirror reads of an answer; its tool calls are the ones the run's handoffs are matched with. */
  #read(response: AgentsModelOutput, model: string | undefined): MirrorResponse {
    const mirrored = responseOf(response, model);
    if (this.#run !== undefined) this.#run.pendingCalls = [...(mirrored.toolCalls ?? [])];
    return mirrored;
  }

  /** Stops the SDK's run with the mirror's reason: its signal aborts with it, so the SDK throws it as it is. */
  #refuse(stop: MirrorStop): never {
    const run = this.#run;
    if (run !== undefined && !run.controller.signal.aborted) {
      run.refused = stop;
      run.controller.abort(stop);
    }
    throw stop;
  }

  #tool(given: AnyFunctionTool): AnyFunctionTool {
    const tool = (ORIGINALS.get(given) ?? given) as AnyFunctionTool;
    const { invoke, needsApproval } = tool;
    const { approvals } = this.mirror;
    approvals.carry(tool.name);
    const wrapped: AnyFunctionTool = {
      ...tool,
      ...(approvals.policy !== undefined && {
        needsApproval: async (ctx, input, callId) =>
          approvals.requires({ id: callId ?? tool.name, name: tool.name, input }) || needsApproval(ctx, input, callId),
      }),
      invoke: async (runContext, input, details) => {
        const id = details?.toolCall?.callId ?? `${tool.name}-${++this.#unnamed}`;
        this.#started(id);
        // A resumed run's recorded result goes back as text, an error result too, as the SDK's tool() reports one.
        return this.mirror.tool(
          { id, name: tool.name, input: parseJsonOrText(input) },
          () => invoke(runContext, input, details),
          {
            served: (answer) => answer.output,
            refuse: (stop) => this.#refuse(stop),
            output: toolText,
          },
        );
      },
    };
    ORIGINALS.set(wrapped, tool);
    return wrapped;
  }

  #handoff(entry: AnyAgent | AnyHandoff, from: string): AnyHandoff {
    const h = entry instanceof Handoff ? entry : sdkHandoff(entry);
    const target = this.agent(h.agent);
    const original = h.onInvokeHandoff.bind(h);
    const copy = Object.assign(Object.create(Object.getPrototypeOf(h) as object) as AnyHandoff, h);
    copy.agent = target;
    copy.onInvokeHandoff = async (context, args) => {
      const call = this.#pendingCall(h.toolName, args);
      const hand = async (): Promise<AnyAgent> => this.agent(await original(context, args));
      // A resumed run: the handoff was recorded; it is made again (it only picks the next agent), not reported twice.
      return this.mirror.tool(call, hand, {
        served: hand,
        refuse: (stop) => this.#refuse(stop),
        output: (next) => `handed off from ${from} to ${next.name}`,
      });
    };
    return copy;
  }

  /** The handoff call of the last response with this tool name (the SDK does not hand its id to the handoff). */
  #pendingCall(name: string, args: string): ToolCall {
    const run = this.#run;
    const index = run?.pendingCalls.findIndex((c) => c.name === name) ?? -1;
    if (run !== undefined && index >= 0) return run.pendingCalls.splice(index, 1)[0]!;
    const n = run === undefined ? 0 : ++run.handoffs;
    return { id: `handoff-${n}`, name, input: parseJsonOrText(args) };
  }

  #started(id: string): void {
    const run = this.#run;
    if (run === undefined) return;
    const index = run.pendingCalls.findIndex((c) => c.id === id);
    if (index >= 0) run.pendingCalls.splice(index, 1);
  }
}

/** Makes an `AgentsMirror`. */
export const agentsMirror = (options: AgentsMirrorOptions = {}): AgentsMirror => new AgentsMirror(options);

/** A signal that never aborts, for a request the SDK gave none. */
const NEVER = new AbortController().signal;

/** Each wrapped agent and tool, to what it wraps: any mirror wraps from the original, never a wrapper. */
const ORIGINALS = new WeakMap<object, object>();

function isMirrorStop(error: unknown): boolean {
  return error instanceof BudgetExceededError || error instanceof TurnCancelledError || error instanceof OperationError;
}
