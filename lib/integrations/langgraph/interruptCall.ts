import { InvalidArgumentError, type ToolCall } from 'agent-state-machine';

/** One of LangGraph's interrupts, as `__interrupt__` and a `GraphInterrupt` carry it. */
export interface LangGraphInterrupt {
  id?: string;
  value?: unknown;
}

/** What an interrupt is about, beside its value: the tool it was raised in, and the last response's tool calls. */
export interface InterruptContext {
  /** The tool call whose tool raised it (`interrupt()` inside a tool the ToolNode ran), if one did. */
  inTool: ToolCall | undefined;
  /** The tool calls of the run's last model response. */
  lastCalls: readonly ToolCall[];
}

/**
 * The tool call an `interrupt()` asks a person to approve:
 * - raised inside a tool (the ToolNode ran it): that tool call, whatever the value;
 * - a value that is a LangChain tool call, `{ name, args, id? }` (`interrupt(message.tool_calls[0])`
 *   in a review node before the tools run): that call;
 * - LangGraph's human-in-the-loop request, `{ action_request: { action, args } }` (the value
 *   itself, or the first of an array of them): the call named `action` with input `args`.
 *
 * A call with no id of its own takes the id of the last response's call with the same name and
 * input (the call it is about), else the interrupt's id. Any other value is refused by name: the
 * mirror does not guess which call waits.
 */
export function interruptCall(interrupt: LangGraphInterrupt, context: InterruptContext): ToolCall | Error {
  if (context.inTool !== undefined) return context.inTool;
  const value = Array.isArray(interrupt.value) ? (interrupt.value[0] as unknown) : interrupt.value;
  const asked = askedCall(value);
  if (asked === undefined)
    return new InvalidArgumentError(
      'interrupt() value',
      "an interrupt raised inside a tool the graph runs, a LangChain tool call `{ name, args, id? }`, or LangGraph's human-in-the-loop request `{ action_request: { action, args } }` (the mirror parks a run only for a tool call it can name): interrupt with one of those, or leave out `approvals: true` so the interrupt ends the run as cancelled",
      interrupt.value,
    );
  const id =
    asked.id ??
    context.lastCalls.find((c) => c.name === asked.name && sameJson(c.input, asked.input))?.id ??
    interrupt.id;
  if (id === undefined)
    return new InvalidArgumentError(
      'interrupt() value',
      "a tool call with an id, one of the last response's tool calls, or an interrupt with its own id (LangGraph 1.x gives each one)",
      interrupt.value,
    );
  return { id, name: asked.name, input: asked.input };
}

/** The call a value names, by either shape; undefined for any other value. */
function askedCall(value: unknown): { id?: string; name: string; input: unknown } | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Record<string, unknown>;
  if (typeof v.name === 'string' && typeof v.args === 'object' && v.args !== null)
    return { ...(typeof v.id === 'string' && v.id !== '' ? { id: v.id } : {}), name: v.name, input: v.args };
  const request = v.action_request as { action?: unknown; args?: unknown } | undefined;
  if (typeof request?.action === 'string' && typeof request.args === 'object' && request.args !== null)
    return { name: request.action, input: request.args };
  return undefined;
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
