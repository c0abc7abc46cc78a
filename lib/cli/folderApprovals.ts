import { folderAnswerBox } from '../batch/approvals/AnswerBox';
import { readWaitingApprovals } from '../batch/approvals/waitingApprovals';
import { escapeControl } from '../internal/escapeControl';
import type { ApprovalsPlace } from './ApprovalsPlace';
import { historyApprovals } from './historyApprovals';

/**
 * The approvals of the batch of history folder `folder`: the calls its runs wait on
 * (`readWaitingApprovals`), answered through the folder's answers (`batch.answers/`).
 */
export function folderApprovals(folder: string, clock: () => number): ApprovalsPlace {
  const where = escapeControl(folder);
  return historyApprovals(
    {
      where: `in ${where}`,
      batch: `the batch in ${where}`,
      listHint: `agent-sm approvals ${where}`,
      answerHint: `agent-sm approve|deny ${where} <run> [<callId>]`,
      names: { folder },
      read: () => readWaitingApprovals(folder),
      box: folderAnswerBox(folder),
    },
    clock,
  );
}
