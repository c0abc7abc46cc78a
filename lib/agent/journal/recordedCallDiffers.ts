import type { LLMCallInput } from '../AgentEvents';

/** What a journal keeps of an LLM attempt, as far as comparing it with a new request goes. */
export interface RecordedCall {
  readonly operation?: unknown;
  readonly input?: unknown;
  readonly turn?: unknown;
  readonly attempt?: unknown;
}

/**
 * Why the call asked for now is not the one recorded, in words, or undefined when they agree:
 * the same operation with the same user message, or the same tool results and messages.
 * A recorded call that kept no input (redacted) agrees with any. Used by replay and resume.
 */
export function recordedCallDiffers(entry: RecordedCall, operation: string, input: LLMCallInput): string | undefined {
  if (entry.operation !== operation)
    return `the run asked for ${operation}, the journal has ${String(entry.operation)} (turn ${String(entry.turn)}, attempt ${String(entry.attempt)})`;
  const recorded = entry.input as LLMCallInput | undefined;
  if (recorded === undefined) return undefined;
  if (input.kind === 'user_message' && recorded.kind === 'user_message' && recorded.message !== input.message) {
    return `the user message differs: recorded ${quote(recorded.message)}, asked ${quote(input.message)}`;
  }
  if (input.kind === 'tool_results' && recorded.kind === 'tool_results') {
    if (recorded.results.length !== input.results.length)
      return `${input.results.length} tool results were sent, the journal has ${recorded.results.length}`;
    for (const [i, r] of input.results.entries()) {
      const was = recorded.results[i]!;
      if (was.callId !== r.callId || was.output !== r.output || (was.isError === true) !== (r.isError === true)) {
        return `tool result ${i + 1} (${r.callId}) differs: recorded ${quote(was.output)}, sent ${quote(r.output)}`;
      }
    }
    if (JSON.stringify(recorded.messages) !== JSON.stringify(input.messages))
      return 'the messages sent with the tool results differ';
  }
  return undefined;
}

function quote(text: string): string {
  return JSON.stringify(text.length > 80 ? `${text.slice(0, 77)}...` : text);
}
