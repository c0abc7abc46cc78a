import { InvalidArgumentError } from 'agent-state-machine';

// The requests a LangChain chat model makes on its own. Its AsyncCaller (`model.caller`,
// `maxRetries` 6 by default) retries a failed request inside one `_generate` (ChatOpenAI's
// `completionWithRetry`), where the mirror hears one chat model run: each retry may be billed,
// and none would be gated or charged. ChatOpenAI sends each call with the retries its call
// options state (`maxRetries`), so the wrapped model sends every request with `maxRetries: 0`
// and the mirror makes the caller's retries itself (`retriedAsClient`, as the Agents SDK
// mirror does), each one gated and charged as an attempt. ChatOpenAI's own `openai` client is
// made with `maxRetries: 0`; `configuration.maxRetries` would turn its retries back on, and
// the mirror cannot turn those off, so it refuses such a model.

/** A LangChain AsyncCaller: how many times it retries, and the handler that says whether it retries an error (it throws if not). */
interface Caller {
  maxRetries?: unknown;
  onFailedAttempt?: (error: unknown) => unknown;
}

/** The retries the mirror makes for a chat model, in place of its caller's. */
export interface CallerRetries {
  /** The caller's `maxRetries`. */
  retries: number;
  /** Whether the caller would retry after `error`: its own failed-attempt handler does not throw. */
  wouldRetry(error: unknown): boolean;
}

/** The metadata key a wrapped model's runs carry: the mirror makes its caller's retries, so a graph it observes may call it. */
export const RETRIES_MADE_BY_MIRROR = 'agent_state_machine_retries';

/**
 * The caller retries of `model` the mirror makes itself (its requests are then sent with
 * `maxRetries: 0`; a call's own `maxRetries` option, when it states one, is how many), or
 * `undefined` for a model it leaves as it is: one that makes no requests through LangChain's
 * AsyncCaller, or another provider's whose caller retries nothing (`maxRetries: 0`). Throws,
 * naming the setting, for a model whose retries the mirror cannot turn off.
 */
export function callerRetriesOf(model: unknown, name: string): CallerRetries | undefined {
  const m = model as { completions?: unknown; responses?: unknown; caller?: Caller; completionWithRetry?: unknown };
  // ChatOpenAI sends through its Chat Completions or Responses model; a bare one of those sends itself.
  const senders = [m.completions, m.responses].filter(sends);
  if (senders.length === 0 && sends(model)) senders.push(model);
  if (senders.length === 0) return undefined;
  const kind = typeName(model);
  if (!senders.every(isOpenAISender)) {
    const retries = maxRetriesOf(m.caller);
    if (retries === 0) return undefined;
    throw new InvalidArgumentError(
      `${name} (${kind}) maxRetries`,
      `0: the model retries failed requests inside LangChain's AsyncCaller, where the mirror sees one call and cannot gate or charge the others, and the mirror can turn off the retries of ChatOpenAI only; construct it with maxRetries: 0 (a retried node's retryPolicy or .withRetry() comes back through the mirror)`,
      retries,
    );
  }
  for (const sender of senders) {
    const clientRetries = (sender as { clientConfig?: { maxRetries?: unknown } }).clientConfig?.maxRetries;
    if (clientRetries !== undefined && clientRetries !== 0)
      throw new InvalidArgumentError(
        `${name} (${kind}) configuration.maxRetries`,
        `unset or 0: the openai client would retry failed requests itself, unseen by the mirror, which makes the model's retries (its maxRetries) itself, each gated and charged`,
        clientRetries,
      );
  }
  const callers = senders.map((s) => (s as { caller?: Caller }).caller);
  // Even at maxRetries 0 its requests go with maxRetries: 0, which a call option could raise (withConfig({ maxRetries })).
  const retries = Math.max(...callers.map(maxRetriesOf));
  const caller = callers[0];
  return {
    retries,
    wouldRetry(error) {
      try {
        caller?.onFailedAttempt?.(error);
        return true;
      } catch {
        return false;
      }
    },
  };
}

/** Call options for one request with the caller's retries off (ChatOpenAI reads `maxRetries` from them). */
export function withoutCallerRetries(options: unknown): Record<string, unknown> {
  return { ...(typeof options === 'object' && options !== null ? options : {}), maxRetries: 0 };
}

/** How many retries a call makes: its own `maxRetries` option when it states one, else its model's caller's. */
export function retriesOfCall(retries: CallerRetries, options: unknown): CallerRetries {
  const stated = (options as { maxRetries?: unknown } | null | undefined)?.maxRetries;
  return typeof stated === 'number' && stated >= 0 ? { ...retries, retries: stated } : retries;
}

/**
 * The error refusing a chat model a graph calls whose caller retries where the mirror cannot
 * see, from what LangChain reports at its start (its serialized constructor, its run's
 * metadata): a ChatOpenAI not given through `lg.wrapModel` and not made with `maxRetries: 0`.
 * Undefined when its requests can all be gated.
 */
export function unseenRetries(
  serialized: unknown,
  metadata: Record<string, unknown> | undefined,
): InvalidArgumentError | undefined {
  if (metadata?.[RETRIES_MADE_BY_MIRROR] === true) return undefined;
  const s = serialized as { id?: unknown; kwargs?: { max_retries?: unknown } } | undefined;
  const kind: unknown = Array.isArray(s?.id) ? s.id.at(-1) : undefined;
  if (typeof kind !== 'string' || !kind.includes('ChatOpenAI')) return undefined;
  // LangChain's AsyncCaller retries 6 times unless told otherwise.
  const retries = s?.kwargs?.max_retries ?? 6;
  if (retries === 0) return undefined;
  return new InvalidArgumentError(
    `model (a ${kind} the graph called) maxRetries`,
    "0, or the model given to the graph through lg.wrapModel(model): it retries failed requests inside LangChain's AsyncCaller, where the mirror sees one call and cannot gate or charge the others (wrapped, its retries are made by the mirror, each gated and charged)",
    retries,
  );
}

function sends(model: unknown): boolean {
  return typeof (model as { completionWithRetry?: unknown } | null)?.completionWithRetry === 'function';
}

/** `@langchain/openai`'s Chat Completions and Responses models (by their client config, which only they keep). */
function isOpenAISender(model: unknown): boolean {
  const config = (model as { clientConfig?: unknown }).clientConfig;
  return (
    typeof config === 'object' &&
    config !== null &&
    typeof (model as { _getClientOptions?: unknown })._getClientOptions === 'function'
  );
}

function maxRetriesOf(caller: Caller | undefined): number {
  const retries = caller?.maxRetries;
  return typeof retries === 'number' && retries >= 0 ? retries : 0;
}

function typeName(model: unknown): string {
  const name = (model as { constructor?: { name?: unknown } } | null)?.constructor?.name;
  return typeof name === 'string' && name !== '' ? name : 'a chat model';
}
