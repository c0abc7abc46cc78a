import { escapeControl } from '../internal/escapeControl';
import type { ApprovalsPlace } from './ApprovalsPlace';
import { safeUrl } from './openStore';

/** A store batch's approvals: refused by name, as a store batch takes answers in its own process only (onApproval). */
export function storeApprovals(url: string, batchId: string, _clock: () => number): ApprovalsPlace {
  const refuse = (): never => {
    throw new Error(
      `--store ${safeUrl(url)}: batch ${escapeControl(batchId)}'s runs take answers in the process that runs the batch only ` +
        "(runBatch's onApproval); answer there, or run the batch with historyDir and use agent-sm approvals <folder>",
    );
  };
  return { where: '', batch: '', answerHint: '', list: async () => refuse(), answer: async () => refuse() };
}
