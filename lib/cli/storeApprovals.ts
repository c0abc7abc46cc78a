import { keepsAnswers, storeAnswerBox, type AnswerBox, type AnswerStore } from '../batch/approvals/AnswerBox';
import { storeBatchSource } from '../batch/reading/BatchSource';
import type { RunStore } from '../batch/keeping/RunStore';
import { waitingApprovalsOf } from '../batch/approvals/waitingApprovals';
import { escapeControl } from '../internal/escapeControl';
import type { ApprovalsPlace } from './ApprovalsPlace';
import { historyApprovals } from './historyApprovals';
import { safeUrl } from './openStore';

/**
 * The approvals of batch `batchId` of the store at `url` (`runBatch({ store, approve })`): the
 * calls its runs wait on, read from their histories in the store, answered through the answers
 * the store keeps (`RunStore.keepAnswer`), which the running batch takes within a poll, a batch
 * resumed later when the run waits again. A store that keeps no answers is refused by name.
 */
export function storeApprovals(
  url: string,
  batchId: string,
  clock: () => number,
  open: (url: string) => Promise<RunStore>,
): ApprovalsPlace {
  const id = escapeControl(batchId);
  const shown = `batch ${id} (store ${safeUrl(url)})`;
  let opened: Promise<RunStore> | undefined;
  const store = async (): Promise<AnswerStore> => {
    const s = await (opened ??= open(url));
    if (!keepsAnswers(s))
      throw new Error(
        `--store ${safeUrl(url)}: this store keeps no answers (it has no keepAnswer, readAnswers, markAnswerTaken): ` +
          "its batches take answers in the process that runs them only (runBatch's onApproval)",
      );
    return s;
  };
  const box = async (): Promise<AnswerBox> => storeAnswerBox(await store(), batchId);
  return historyApprovals(
    {
      where: `in ${shown}`,
      batch: shown,
      listHint: `agent-sm approvals --store ${safeUrl(url)} ${id}`,
      answerHint: `agent-sm approve|deny --store ${safeUrl(url)} ${id} <run> [<callId>]`,
      names: { store: safeUrl(url), batchId },
      read: async () => waitingApprovalsOf(await storeBatchSource(await store(), batchId), await box()),
      box: {
        where: shown,
        write: async (answer) => (await box()).write(answer),
        read: async () => (await box()).read(),
        markTaken: async (answer) => (await box()).markTaken(answer),
      },
    },
    clock,
  );
}
