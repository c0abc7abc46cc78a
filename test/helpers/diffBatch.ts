// Batches for `agent-sm diff`: the same three tasks run by scripted agents, with one thing
// changed per variant (a task's prompt, the model's answer, a tool made to fail), as a team
// reruns a batch after a change (or the model starts failing one task: a regression). Time comes from a stepping clock, so two runs of one
// variant differ in nothing but what the variant changed (and the ignored fields).
import { createScriptedAgent, runBatch, type BatchTask } from '../../lib/index';
import type { RunStore } from '../../lib/subpaths/batch';

/** What a variant changes from the base batch. */
export type DiffVariant = 'base' | 'prompt' | 'response' | 'toolFails' | 'modelFails';

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** The tasks of the batch: `a` and `b` call a tool then answer; `c` answers at once. */
export function diffTasks(variant: DiffVariant, ids: readonly string[] = ['a', 'b', 'c']): BatchTask[] {
  return ids.map((id) => ({
    id,
    input: variant === 'prompt' && id === 'b' ? `fix the bug in ${id}, and add a test` : `fix the bug in ${id}`,
    agent: () =>
      createScriptedAgent({
        sleep: () => tick(),
        replies:
          id === 'c'
            ? [{ text: 'nothing to do', usage: { costUsd: 0.001, inputTokens: 10, outputTokens: 3 } }]
            : [
                {
                  text: 'looking',
                  toolCalls: [{ id: `${id}1`, name: 'grep', input: { pattern: 'bug' } }],
                  usage: { costUsd: 0.01, inputTokens: 100, outputTokens: 20 },
                  model: 'model-1',
                },
                variant === 'response' && id === 'a'
                  ? { text: 'I could not find it', usage: { costUsd: 0.03, inputTokens: 150, outputTokens: 60 } }
                  : variant === 'modelFails' && id === 'b'
                    ? { error: 'HTTP 503: the model is overloaded' }
                    : { text: 'fixed', usage: { costUsd: 0.02, inputTokens: 150, outputTokens: 30 } },
                // Retries of a failing call fail alike.
                ...(variant === 'modelFails' && id === 'b'
                  ? [{ error: 'HTTP 503: the model is overloaded' }, { error: 'HTTP 503: the model is overloaded' }]
                  : []),
              ],
        tools: {
          grep:
            variant === 'toolFails' && id === 'a'
              ? { error: 'grep: permission denied' }
              : { output: `${id}.ts:3: the bug` },
        },
      }),
  }));
}

/**
 * Runs a variant's batch into `historyDir` (or a store, as batch `batchId`), its clock stepping
 * by `stepMs` (vary it: time is never compared).
 */
export async function runDiffBatch(
  where: string | { store: RunStore; batchId: string },
  variant: DiffVariant,
  stepMs = 5,
): Promise<void> {
  let t = Date.UTC(2026, 10, 22, 12, 0, 0);
  await runBatch(diffTasks(variant), {
    logger: false,
    ...(typeof where === 'string' ? { historyDir: where } : where),
    concurrency: 1,
    sleep: () => tick(),
    clock: () => (t += stepMs),
  });
}
