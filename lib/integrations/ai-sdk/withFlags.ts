import type { MirrorCallFlags } from 'agent-state-machine';
import { beforeLastRound } from '../../internal/beforeLastRound';

/** What the wrapper reads of a model call's options (LanguageModelV2/V3 call options). */
export interface CallOptions {
  prompt?: unknown;
  tools?: unknown;
  toolChoice?: unknown;
  responseFormat?: unknown;
  maxOutputTokens?: unknown;
  abortSignal?: AbortSignal;
}

/**
 * A model call as the mirror asks it to be sent: the results it carries replaced when they
 * would not fit (`withheld`), or the last round left out when not even that fits
 * (`withoutLastRound`: the prompt as the call before it sent it), then the final call's
 * instruction and the budget note as user messages, last; a final call may call no tool (`toolChoice` none: the definitions stay for the
 * tool calls already in the conversation, which some providers require).
 */
export function withFlags(o: CallOptions, flags: MirrorCallFlags): CallOptions {
  const { budgetNote, wrapUp, withheld, withoutLastRound } = flags;
  if (budgetNote === undefined && wrapUp === undefined && withheld === undefined && withoutLastRound === undefined)
    return o;
  let prompt: unknown[] = Array.isArray(o.prompt) ? [...(o.prompt as unknown[])] : [];
  if (withoutLastRound === true) prompt = beforeLastRound(prompt) ?? prompt;
  else if (withheld !== undefined) prompt = withheldResults(prompt, withheld);
  if (wrapUp !== undefined) prompt.push(userMessage(wrapUp));
  if (budgetNote !== undefined) prompt.push(userMessage(budgetNote));
  const sent: CallOptions = { ...o, prompt };
  if (wrapUp !== undefined && Array.isArray(o.tools) && o.tools.length > 0) sent.toolChoice = { type: 'none' };
  return sent;
}

function userMessage(text: string): { role: 'user'; content: Array<{ type: 'text'; text: string }> } {
  return { role: 'user', content: [{ type: 'text', text }] };
}

/** The prompt with the tool results after its last assistant message (those this call carries) answered `text`, as errors. */
function withheldResults(prompt: unknown[], text: string): unknown[] {
  const last = beforeLastRound(prompt)?.length ?? -1;
  return prompt.map((m, i) => {
    const message = m as { role?: unknown; content?: unknown };
    if (i < last || message?.role !== 'tool' || !Array.isArray(message.content)) return m;
    return {
      ...message,
      content: message.content.map((part: { type?: unknown }) =>
        part?.type === 'tool-result' ? { ...part, output: { type: 'error-text', value: text } } : part,
      ),
    };
  });
}
