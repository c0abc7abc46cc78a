import type { TableIssue } from './checkTable';
import { StateMachineError } from './StateMachineError';

/**
 * A transition table failed its check; `issues` lists every problem, each with its own code.
 * `advice`, when given, opens the message: what the problems mean for the caller and what to do
 * (the adapter's refusal of a table without the extensions its options need).
 */
export class InvalidTableError extends StateMachineError {
  readonly code = 'invalid_table' as const;

  constructor(
    readonly issues: readonly TableIssue[],
    advice?: string,
  ) {
    const list = issues.map((i) => `  - [${i.code}] ${i.message}`).join('\n');
    const count = `${issues.length} problem${issues.length === 1 ? '' : 's'}`;
    super(
      advice === undefined
        ? `Invalid transition table (${count}):\n${list}`
        : `${advice}\nThe table's problems (${count}):\n${list}`,
    );
  }
}
