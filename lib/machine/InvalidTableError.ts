import type { TableIssue } from './checkTable';
import { StateMachineError } from './StateMachineError';

/** A transition table failed its check; `issues` lists every problem, each with its own code. */
export class InvalidTableError extends StateMachineError {
  readonly code = 'invalid_table' as const;

  constructor(readonly issues: readonly TableIssue[]) {
    super(
      `Invalid transition table (${issues.length} problem${issues.length === 1 ? '' : 's'}):\n${issues.map((i) => `  - [${i.code}] ${i.message}`).join('\n')}`,
    );
  }
}
