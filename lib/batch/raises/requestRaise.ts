import { HistoryFileError } from '../../history/HistoryFileError';
import { formatUsd } from '../../internal/formatUsd';
import { InvalidArgumentError } from '../../machine/InvalidArgumentError';
import { readBatchManifest, type BatchManifest } from '../keeping/batchManifest';
import type { RunStore } from '../keeping/RunStore';
import { folderRaiseBox, keepsRaises, storeRaiseBox, type RaiseBox } from './RaiseBox';

/**
 * Asks a batch to raise its total dollar cap to `maxCostUsd`: the batch of history folder `dir`,
 * or batch `batchId` of a store that keeps raises (`FileStore`, `PostgresStore`). Checks that its
 * manifest says `total.whenSpent: 'pause'` and that `maxCostUsd` is above the cap in force (the
 * manifest's, or the last raise asked), then keeps the request (a folder's forced to the disk).
 * The running batch takes it within a poll; a batch resumed later starts from it. Returns the
 * cap it replaces.
 */
export async function requestRaise(
  batch: string | { store: RunStore; batchId: string },
  maxCostUsd: number,
  clock: () => number = Date.now,
): Promise<number> {
  if (!(typeof maxCostUsd === 'number' && Number.isFinite(maxCostUsd) && maxCostUsd > 0))
    throw new InvalidArgumentError('maxCostUsd', 'a positive finite number of USD', maxCostUsd);
  const { box, manifest } = await raiseTarget(batch);
  const total = manifest.limits.total as { maxCostUsd?: number; whenSpent?: unknown } | undefined;
  if (total?.whenSpent !== 'pause' || total.maxCostUsd === undefined)
    throw new InvalidArgumentError(
      typeof batch === 'string' ? 'folder' : 'batchId',
      `the ${typeof batch === 'string' ? 'folder of a batch' : 'id of a batch'} run with total: { maxCostUsd, whenSpent: 'pause' } (this one stops at its cap: resume it with a new total instead)`,
      typeof batch === 'string' ? batch : batch.batchId,
    );
  let now = total.maxCostUsd;
  for (const r of (await box.read(0)).requests) now = Math.max(now, r.maxCostUsd);
  if (!(maxCostUsd > now))
    throw new InvalidArgumentError('--total-usd', `a cap above the one in force (${formatUsd(now)})`, maxCostUsd);
  await box.append({ maxCostUsd, at: clock() });
  return now;
}

/** The raise box and the manifest of the batch `requestRaise` is given, or why it cannot be raised. */
async function raiseTarget(
  batch: string | { store: RunStore; batchId: string },
): Promise<{ box: RaiseBox; manifest: BatchManifest }> {
  if (typeof batch === 'string') {
    const manifest = await readBatchManifest(batch);
    if (manifest === undefined)
      throw new HistoryFileError(
        'read_failed',
        batch,
        'is not the history folder of a batch (it has no batch.json): give the folder runBatch wrote (its historyDir), or --redis URL --batch ID for a BullMQ batch',
      );
    return { box: folderRaiseBox(batch), manifest };
  }
  const { store, batchId } = batch;
  const where = `${store.name} batch ${batchId}`;
  if (!keepsRaises(store))
    throw new HistoryFileError(
      'read_failed',
      where,
      "the store keeps no raises (no keepRaise, readRaises, keepPause, readPause): raise its batch from onPause's raise in the batch's process",
    );
  const manifest = (await store.readBatch(batchId))?.manifest;
  if (manifest === undefined) throw new HistoryFileError('not_found', where, 'no such batch in the store');
  return { box: storeRaiseBox(store, batchId), manifest };
}
