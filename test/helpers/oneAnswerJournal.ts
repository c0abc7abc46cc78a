import type { RecordedLine } from '../../lib/agent/journal/RunRecording';

/** The journal of a run that asked `go` and was answered `hello` (10 in, 5 out, $0.015): a resumed run serves that answer. */
export const ONE_ANSWER_JOURNAL: RecordedLine[] = [
  {
    type: 'llm',
    turn: 1,
    operation: 'sendUserMessage',
    attempt: 1,
    input: { kind: 'user_message', message: 'go' },
    response: { text: 'hello', usage: { inputTokens: 10, outputTokens: 5 } },
    costUsd: 0.015,
  },
];
