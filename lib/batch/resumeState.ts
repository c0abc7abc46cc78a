import * as fs from 'node:fs';
import * as path from 'node:path';
import type { TurnOutcome } from '../agent/TurnOutcome';
import { emptyUsage, type UsageTotals } from '../agent/UsageTotals';
import { loadHistory } from '../history/loadHistory';
import { runFacts } from '../history/runFacts';
import { InvalidArgumentError } from '../machine/InvalidArgumentError';
import { messageOf } from '../internal/messageOf';
import { readBatchManifest } from './batchManifest';

/** What an interrupted batch's folder says of each of its tasks. */
export type TaskState =
  /** Its run ended (a terminal move): it is not run again; its report comes from its file. */
  | { kind: 'finished'; outcome: TurnOutcome; usage: UsageTotals; transitions: number; file: string }
  /** Its run was cut off mid-turn: it runs again, and what it spent before counts. */
  | { kind: 'interrupted'; usage: UsageTotals; file: string }
  /** It never wrote a file: it runs. */
  | { kind: 'not_started' };

const OUTCOMES: ReadonlySet<string> = new Set(['end_of_turn', 'budget_exceeded', 'error', 'cancelled']);

/**
 * Reads the folder of an earlier run of this batch (its `batch.json` and run files): which
 * tasks ended, which were cut off, which never started, and what each spent. The tasks must be
 * the manifest's, in order: resuming another batch into a folder would mix two batches' runs.
 */
export async function resumeState(dir: string, ids: readonly string[]): Promise<TaskState[]> {
  const manifest = await readBatchManifest(dir);
  if (manifest === undefined) {
    throw new InvalidArgumentError(
      'resume',
      `a historyDir that holds an earlier run of this batch (its ${'batch.json'} manifest); ${dir} has none`,
      true,
    );
  }
  const listed = manifest.tasks.map((t) => t.id);
  const differs = listed.length !== ids.length ? -1 : ids.findIndex((id, i) => listed[i] !== id);
  if (listed.length !== ids.length || differs !== -1) {
    const why =
      listed.length !== ids.length
        ? `it lists ${listed.length} tasks, this batch has ${ids.length}`
        : `task ${differs} is ${JSON.stringify(listed[differs])} there, ${JSON.stringify(ids[differs])} here`;
    throw new InvalidArgumentError(
      'resume',
      `the same tasks, in the same order, as the batch in ${dir} (${why})`,
      true,
    );
  }
  return Promise.all(
    manifest.tasks.map(async ({ file }): Promise<TaskState> => {
      const full = path.join(dir, file);
      if (!fs.existsSync(full)) return { kind: 'not_started' };
      let loaded;
      try {
        loaded = await loadHistory(full);
      } catch (error) {
        throw new InvalidArgumentError('resume', `a folder whose run files can be read: ${messageOf(error)}`, true);
      }
      const facts = runFacts(loaded.entries);
      const usage = usageOf(facts.finalUsage);
      const last = facts.turns.at(-1);
      if (last !== undefined && last.end === 'terminal' && OUTCOMES.has(last.outcome)) {
        return {
          kind: 'finished',
          outcome: last.outcome as TurnOutcome,
          usage,
          transitions: loaded.records.length,
          file: full,
        };
      }
      return { kind: 'interrupted', usage, file: full };
    }),
  );
}

function usageOf(run: ReturnType<typeof runFacts>['finalUsage']): UsageTotals {
  const usage = emptyUsage();
  if (run === null) return usage;
  usage.costUsd = run.costUsd;
  usage.inputTokens = run.inputTokens;
  usage.outputTokens = run.outputTokens;
  usage.llmCalls = run.llmCalls;
  usage.toolCalls = run.toolCalls;
  return usage;
}
