import { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { AIMessage, AIMessageChunk } from '@langchain/core/messages';
import { ChatGenerationChunk, type ChatResult } from '@langchain/core/outputs';
import { InvalidArgumentError, type MirrorResponse } from 'agent-state-machine';
import { retriedAsClient, streamRetriedAsClient, type ClientRetries } from '../../internal/clientRetries';
import {
  callerRetriesOf,
  retriesOfCall,
  RETRIES_MADE_BY_MIRROR,
  withoutCallerRetries,
  type CallerRetries,
} from './callerRetries';

/** What LangChain hands a chat model's and a tool's own methods: the run they belong to. */
interface RunManager {
  runId?: string;
}

type Generate = (messages: unknown, options: unknown, runManager?: RunManager) => Promise<ChatResult>;
type Stream = (messages: unknown, options: unknown, runManager?: RunManager) => AsyncGenerator<ChatGenerationChunk>;
type ToolCall = (arg: unknown, runManager?: RunManager, config?: unknown) => Promise<unknown>;
type Events = (messages: unknown, options: unknown, runManager?: RunManager) => AsyncGenerator<unknown>;

/** LangChain's own `_streamChatModelEvents` (1.x releases that stream v3 events have it): it turns chunks into events. */
const baseEvents = (BaseChatModel.prototype as unknown as { _streamChatModelEvents?: Events })._streamChatModelEvents;

/**
 * The answers a resumed LangGraph run takes from its journal instead of the model and the
 * tools: the callback handler decides, at a call's start, that it is served (and records it);
 * the wrapped model or tool then answers that run with it, making no request and running
 * nothing. A callback cannot answer for a model, so serving needs the wrappers.
 */
export class ServedCalls {
  /** Model runs (LangChain run id) to the recorded response they answer with. */
  readonly #responses = new Map<string, MirrorResponse>();
  /** Tool runs to their recorded result. */
  readonly #tools = new Map<string, { output: string; isError: boolean }>();
  /** Runs answered here: their end and error callbacks were recorded already. */
  readonly #runs = new Set<string>();
  /** Model runs the handler let start (answered here or sent) that have not ended. */
  readonly #modelRuns = new Set<string>();
  /** Whether a model, and tools, were wrapped: only then can a call be served. */
  modelWrapped = false;
  toolsWrapped = false;
  /**
   * The handler the wrapped model and tools report to as their own callback (the mirror's, when it
   * observes only what it wrapped); none when it rides the graph's callbacks instead.
   */
  reportTo: object | undefined;
  /**
   * How the mirror makes a wrapped model's caller retries for the run `runId` (its signal
   * `signal`): each failed request charged, each retry gated. Unset, requests go as the model sends them.
   */
  retriesFor: ((runId: string | undefined, retries: CallerRetries, signal?: AbortSignal) => ClientRetries) | undefined;

  serveResponse(runId: string, response: MirrorResponse): void {
    this.#responses.set(runId, response);
    this.#runs.add(runId);
    this.#modelRuns.add(runId);
  }

  /** A model run the handler let go to the model. */
  modelSent(runId: string): void {
    this.#modelRuns.add(runId);
  }

  /** A run of the graph starts: model runs a run before left unended (an aborted graph's) are forgotten. */
  runStarts(): void {
    this.#modelRuns.clear();
  }

  serveTool(runId: string, answer: { output: string; isError: boolean }): void {
    this.#tools.set(runId, answer);
    this.#runs.add(runId);
  }

  /** Whether `runId` was answered here (its end is not the framework's to report). */
  ended(runId: string): boolean {
    this.#modelRuns.delete(runId);
    return this.#runs.delete(runId);
  }

  /** `model` answering served runs from the journal, and every other run as it would. */
  wrapModel<M>(model: M): M {
    const inner = model as unknown as { _generate?: Generate; _streamResponseChunks?: Stream };
    if (typeof inner?._generate !== 'function')
      throw new InvalidArgumentError('model', 'a LangChain chat model (a BaseChatModel such as ChatOpenAI)', model);
    // Throws, naming the setting, for a model whose own retries the mirror cannot turn off.
    const callerRetries = callerRetriesOf(model, 'model');
    this.modelWrapped = true;
    const responses = this.#responses;
    const modelRuns = this.#modelRuns;
    /** The mirror's retries of `runId`'s call, or none (the model's caller retries nothing, or nothing makes them). */
    const retriesOf = (runId: string | undefined, options: unknown): ClientRetries | undefined => {
      if (callerRetries === undefined || this.retriesFor === undefined) return undefined;
      const signal = (options as { signal?: unknown } | undefined)?.signal;
      return this.retriesFor(
        runId,
        retriesOfCall(callerRetries, options),
        signal instanceof AbortSignal ? signal : undefined,
      );
    };
    const take = (runManager?: RunManager): MirrorResponse | undefined => {
      const id = runManager?.runId;
      const response = id === undefined ? undefined : responses.get(id);
      if (response !== undefined) responses.delete(id!);
      return response;
    };
    const generate: Generate = async (messages, options, runManager) => {
      const response = take(runManager);
      if (response === undefined) {
        // The caller's retries off, each one made by the mirror: gated and charged.
        const retries = retriesOf(runManager?.runId, options);
        if (retries === undefined) return inner._generate!.call(model, messages, options, runManager);
        const sent = withoutCallerRetries(options);
        return retriedAsClient(() => inner._generate!.call(model, messages, sent, runManager), retries);
      }
      const message = aiMessage(response);
      return { generations: [{ text: response.text ?? '', message }] };
    };
    const own: PropertyDescriptorMap = { _generate: { value: generate, writable: true, configurable: true } };
    if (this.reportTo !== undefined) own.callbacks = this.#ownCallbacks(model);
    // Its runs say that the mirror makes its caller's retries: a graph the mirror observes may call it.
    const metadata = (model as { metadata?: unknown }).metadata;
    own.metadata = {
      value: { ...(typeof metadata === 'object' && metadata !== null ? metadata : {}), [RETRIES_MADE_BY_MIRROR]: true },
      writable: true,
      configurable: true,
    };
    // Only a model that streams gets a streamed answer: LangChain streams when the method is its own.
    if (inner._streamResponseChunks !== BaseChatModel.prototype._streamResponseChunks) {
      const stream: Stream = async function* (messages, options, runManager) {
        const response = take(runManager);
        if (response === undefined) {
          const retries = retriesOf(runManager?.runId, options);
          if (retries === undefined) yield* inner._streamResponseChunks!.call(model, messages, options, runManager);
          else {
            const sent = withoutCallerRetries(options);
            yield* streamRetriedAsClient(
              () => inner._streamResponseChunks!.call(model, messages, sent, runManager),
              retries,
            );
          }
          return;
        }
        yield new ChatGenerationChunk({ text: response.text ?? '', message: aiChunk(response) });
      };
      own._streamResponseChunks = { value: stream, writable: true, configurable: true };
    }
    // LangGraph's v3 events: LangChain streams the call through `_streamChatModelEvents` and
    // gives it no run manager, so the call is told by being the one model run in flight. Where
    // it cannot be told (parallel calls, one of them answered here), it is refused, not sent:
    // sent, a call recorded as answered would go out uncharged.
    const innerEvents = (inner as { _streamChatModelEvents?: unknown })._streamChatModelEvents;
    if (typeof innerEvents === 'function' && baseEvents !== undefined) {
      const events: Events = async function* (messages, options, runManager) {
        const sole: string | undefined = modelRuns.size === 1 ? modelRuns.values().next().value : undefined;
        const response = take(runManager ?? (sole === undefined ? undefined : { runId: sole }));
        if (response !== undefined) {
          const chunks = async function* (): AsyncGenerator<ChatGenerationChunk> {
            yield new ChatGenerationChunk({ text: response.text ?? '', message: aiChunk(response) });
          };
          yield* baseEvents.call({ _streamResponseChunks: chunks }, messages, options ?? {});
          return;
        }
        if (runManager === undefined && responses.size > 0)
          throw new Error(
            "a resumed run's recorded model call cannot be told apart from the model calls beside it on LangGraph's streamEvents v3 (LangChain gives the chat model no run there): resume it with invoke or stream",
          );
        const retries = retriesOf(runManager?.runId ?? sole, options);
        if (retries === undefined) yield* (innerEvents as Events).call(model, messages, options, runManager);
        else {
          const sent = withoutCallerRetries(options);
          yield* streamRetriedAsClient(() => (innerEvents as Events).call(model, messages, sent, runManager), retries);
        }
      };
      own._streamChatModelEvents = { value: events, writable: true, configurable: true };
    }
    // Binding tools or config makes another model (ChatOpenAI) or a binding of this one: wrapped the same way.
    for (const name of ['bindTools', 'withConfig'] as const) {
      const method = (model as Record<string, unknown>)[name];
      if (typeof method !== 'function') continue;
      own[name] = {
        value: (...args: unknown[]) => this.#rebind(method.apply(model, args), model, wrapped),
        writable: true,
        configurable: true,
      };
    }
    // The model's own state stays where it is: its methods run on it, the wrapper only answers first.
    const wrapped = Object.create(model as object, own) as M;
    return wrapped;
  }

  /** What binding returned, answering served runs too: a new model is wrapped, a binding of `model` is pointed at `wrapped`. */
  #rebind(out: unknown, model: unknown, wrapped: unknown): unknown {
    if (out === model) return wrapped;
    if (typeof (out as { _generate?: unknown } | null)?._generate === 'function') return this.wrapModel(out);
    if (typeof out === 'object' && out !== null && (out as { bound?: unknown }).bound === model)
      return Object.create(out, { bound: { value: wrapped, writable: true, configurable: true } }) as unknown;
    return out;
  }

  /** `tools` answering served runs with their recorded result, and running every other call. */
  wrapTools<T>(tools: readonly T[]): T[] {
    if (!Array.isArray(tools)) throw new InvalidArgumentError('tools', 'an array of LangChain tools', tools);
    this.toolsWrapped = true;
    const answers = this.#tools;
    return tools.map((tool, i) => {
      const inner = tool as unknown as { _call?: ToolCall };
      if (typeof inner?._call !== 'function')
        throw new InvalidArgumentError(`tools[${i}]`, 'a LangChain tool (made with tool() or a StructuredTool)', tool);
      const call: ToolCall = async (arg, runManager, config) => {
        const id = runManager?.runId;
        const answer = id === undefined ? undefined : answers.get(id);
        if (answer === undefined) return inner._call!.call(tool, arg, runManager, config);
        answers.delete(id!);
        if (answer.isError) throw new Error(answer.output);
        return answer.output;
      };
      const own: PropertyDescriptorMap = { _call: { value: call, writable: true, configurable: true } };
      if (this.reportTo !== undefined) own.callbacks = this.#ownCallbacks(tool);
      return Object.create(tool as object, own) as T;
    });
  }

  /**
   * A model's or tool's own callbacks with the mirror's handler added: LangChain reports each of
   * its runs to them wherever the graph calls it, with no handler on the graph's config (which
   * would be told of every node, channel write and branch of every step).
   */
  #ownCallbacks(runnable: unknown): PropertyDescriptor {
    const given = (runnable as { callbacks?: unknown }).callbacks;
    const handlers: unknown[] = Array.isArray(given)
      ? given
      : Array.isArray((given as { handlers?: unknown } | undefined)?.handlers)
        ? (given as { handlers: unknown[] }).handlers
        : [];
    return { value: [...handlers, this.reportTo], writable: true, configurable: true };
  }
}

function aiMessage(response: MirrorResponse): AIMessage {
  return new AIMessage({
    content: response.text ?? '',
    tool_calls: (response.toolCalls ?? []).map((c) => ({
      id: c.id,
      name: c.name,
      args: (c.input ?? {}) as Record<string, unknown>,
      type: 'tool_call' as const,
    })),
  });
}

function aiChunk(response: MirrorResponse): AIMessageChunk {
  return new AIMessageChunk({
    content: response.text ?? '',
    tool_call_chunks: (response.toolCalls ?? []).map((c, index) => ({
      id: c.id,
      name: c.name,
      args: JSON.stringify(c.input ?? {}),
      index,
      type: 'tool_call_chunk' as const,
    })),
  });
}
