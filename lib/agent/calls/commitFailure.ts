/**
 * What a sink's commit (of the ledger's `reserve` line) failed with, or undefined once it is
 * kept: the caller makes no call when it failed.
 */
export async function commitFailure(commit: PromiseLike<void>): Promise<unknown> {
  try {
    await commit;
    return undefined;
  } catch (error) {
    return error ?? new Error('the commit failed without a reason');
  }
}
