/**
 * Why a store refuses to open a batch another process writes, and what to do: one wording for
 * every store. `holder` names that process, when the store knows it; `frees` says when its lock
 * goes.
 */
export function batchHeldMessage(holder: string | undefined, frees: string): string {
  return (
    `another process is writing this batch${holder === undefined ? '' : ` (${holder})`}: two batches never write one batch id. ` +
    `Wait for it to end (${frees}), then, to finish what it left, run this batch again with \`resume: true\`; ` +
    'or give this batch another `batchId`'
  );
}
