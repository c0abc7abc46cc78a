import type { LLMCallInput } from '../AgentEvents';
import type { AttemptHead } from '../calls/writeAttemptLine';
import type { MirrorSlot } from './MirrorSlot';

/** The attempt in flight, as its journal line names it. */
export interface AttemptFacts {
  turn: number;
  operation: 'sendUserMessage' | 'sendToolResults';
  attempt: number;
  startedAt: number;
  /** The run's user message, sent by `sendUserMessage`. */
  input: string;
  /** The tool calls whose results `sendToolResults` carries. */
  slots: readonly MirrorSlot[];
}

/** The journal line of an attempt, without its end. */
export function mirrorLlmLine(facts: AttemptFacts, endedAt: number): AttemptHead {
  const input: LLMCallInput =
    facts.operation === 'sendUserMessage'
      ? { kind: 'user_message', message: facts.input }
      : {
          kind: 'tool_results',
          results: facts.slots.map((s) => s.result!).filter((r) => r !== undefined),
          messages: [],
        };
  return {
    type: 'llm',
    turn: facts.turn,
    operation: facts.operation,
    attempt: Math.max(1, facts.attempt),
    startedAt: facts.startedAt,
    endedAt,
    input,
  };
}
