/**
 * `messages` before their last assistant message — the last response and what followed it left
 * out: the conversation as the call before it was sent — or undefined when there is none. A final
 * call under `budget.wrapUp` whose results do not fit even withheld is sent so
 * (`OperationContext.withoutLastRound`): that request is the one the final call's hold was worked
 * out from, so it fits.
 */
export function beforeLastRound<M>(messages: readonly M[]): M[] | undefined {
  for (let i = messages.length - 1; i >= 0; i--)
    if ((messages[i] as { role?: unknown } | null)?.role === 'assistant') return messages.slice(0, i);
  return undefined;
}
