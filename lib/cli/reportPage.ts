import * as path from 'node:path';
import { buildHtmlReport, buildStoreBatchReport, type HtmlReport } from '../report/buildHtmlReport';
import { loadOptions, type StoreReading } from './readingOptions';
import { inputOf, runSource, storeFor, storePagePath, type StoreCommandIO } from './storeCommands';

/**
 * The page `agent-sm report` makes of its arguments: a history file's run, a folder's batch, a
 * run of a folder or of a store's batch, or (`--store URL <batchId>`) a store's whole batch;
 * with the history file it read (undefined for a store) and where the page goes unless `-o` says.
 */
export async function reportPage(
  target: string,
  runId: string | undefined,
  opts: StoreReading,
  io: Pick<StoreCommandIO, 'opened'>,
): Promise<{ report: HtmlReport; file: string | undefined; output: string }> {
  if (opts.store !== undefined && runId === undefined) {
    const store = await storeFor(opts.store, io);
    const report = await buildStoreBatchReport(store, target, loadOptions(opts));
    return { report, file: undefined, output: storePagePath(target, 'batch') };
  }
  const { file, input } =
    opts.store === undefined && runId === undefined
      ? { file: target, input: undefined }
      : await runSource(target, runId, opts.store, 'report', io);
  const report = await buildHtmlReport(file, { ...loadOptions(opts), ...inputOf(input) });
  if (input !== undefined) return { report, file: undefined, output: storePagePath(runId!) };
  return { report, file, output: defaultReportPath(file, report.kind) };
}

/** `run.jsonl` → `run.html` beside it; a folder → `report.html` inside it. */
function defaultReportPath(target: string, kind: 'run' | 'batch'): string {
  if (kind === 'batch') return path.join(target, 'report.html');
  return path.join(path.dirname(target), `${path.basename(target, path.extname(target))}.html`);
}
