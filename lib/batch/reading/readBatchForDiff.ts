import type { BatchSource } from './BatchSource';
import type { RunDiffFacts } from './diffBatches';
import { readBatchSource, type BatchFolder, type BatchReadingOptions } from './readBatchFolder';
import { RunDigest } from '../../history/RunDigest';

/** A batch as `diffBatches` takes it: what `readBatchSource` says, and each run's usage, wall time and digest. */
export interface BatchForDiff {
  readonly folder: BatchFolder;
  readonly facts: ReadonlyMap<string, RunDiffFacts>;
}

/**
 * Reads a batch (a folder's or a store's) for a diff in one pass, each run file streamed once
 * as `readBatchSource` reads it, a digest of its steps made on the way: memory holds one run's
 * facts at a time and a few numbers per run.
 */
export async function readBatchForDiff(
  source: BatchSource,
  options: Omit<BatchReadingOptions, 'observe'>,
): Promise<BatchForDiff> {
  const facts = new Map<string, RunDiffFacts>();
  const folder = await readBatchSource(source, {
    ...options,
    observe: (id) => {
      const digest = new RunDigest();
      return {
        entry: (entry) => digest.add(entry),
        done: (run) => {
          // A run whose file records no usage made no call: its counts are zero, not unknown.
          const usage = run.usage ?? NO_CALLS;
          facts.set(id, {
            llmCalls: usage.llmCalls,
            toolCalls: usage.toolCalls,
            inputTokens: usage.inputTokens,
            outputTokens: usage.outputTokens,
            durationMs: run.durationMs,
            digest: digest.digest(),
          });
        },
      };
    },
  });
  return { folder, facts };
}

/** The counts of a run that made no call. */
const NO_CALLS = { llmCalls: 0, toolCalls: 0, inputTokens: 0, outputTokens: 0 } as const;
