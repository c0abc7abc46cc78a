import { escapeControl } from '../internal/escapeControl';
import type { ApprovalsPlace } from './ApprovalsPlace';
import { loadBullmq } from './loadBullmq';
import { safeUrl } from './openStore';

/** What the commands use of `agent-state-machine/bullmq` (loaded only for `--redis`: the CLI runs without BullMQ installed). */
interface Bullmq {
  readBatchApprovals: (o: Record<string, unknown>) => Promise<{
    batchId: string;
    name: string;
    prefix: string;
    running: boolean;
    calls: Array<{
      run: string;
      callId: string;
      tool: string;
      input?: unknown;
      since?: number;
      answer?: { approved: boolean; reason?: string; by?: string; at?: number };
    }>;
  }>;
  answerBatchApproval: (o: Record<string, unknown>) => Promise<{
    calls: Array<{ callId: string; tool: string }>;
    complete: boolean;
    name: string;
    prefix: string;
  }>;
}

/**
 * The approvals of BullMQ batch `batchId` in the Redis at `url` (`readBatchApprovals`,
 * `answerBatchApproval`): the records `onApproval` of `submitBatch` and `attachBatch` use, so an
 * answer given here is taken once, by the run's worker, once every call of the run has one.
 */
export function redisApprovals(
  url: string,
  batchId: string,
  queue: { name?: string | undefined; prefix?: string | undefined },
): ApprovalsPlace {
  const place = {
    connection: url,
    batchId,
    ...(queue.name === undefined ? {} : { name: queue.name }),
    ...(queue.prefix === undefined ? {} : { prefix: queue.prefix }),
  };
  const shown = `batch ${escapeControl(batchId)} (Redis at ${safeUrl(url)})`;
  return {
    where: `in ${shown}`,
    batch: shown,
    answerHint: `agent-sm approve|deny --redis ${safeUrl(url)} ${escapeControl(batchId)} <run> [<callId>]`,
    list: async () => {
      const found = await (await loadBullmq<Bullmq>()).readBatchApprovals(place);
      return {
        running: found.running,
        problems: [],
        names: { redis: safeUrl(url), batchId, queue: found.name, prefix: found.prefix },
        calls: found.calls.map((c) => ({
          run: c.run,
          callId: c.callId,
          tool: c.tool,
          ...('input' in c ? { input: c.input } : {}),
          ...(c.since === undefined ? {} : { since: c.since }),
          // Not taken until every call of the run has one: then its worker takes them all and closes the request.
          ...(c.answer === undefined ? {} : { answer: { ...c.answer, taken: false } }),
        })),
      };
    },
    answer: async ({ run, callId, approved, reason, by }) => {
      const given = await (
        await loadBullmq<Bullmq>()
      ).answerBatchApproval({
        ...place,
        run,
        ...(callId === undefined ? {} : { callId }),
        approved,
        ...(reason === undefined ? {} : { reason }),
        by,
      });
      return {
        calls: given.calls,
        next: given.complete
          ? "every call of the run has its answer: the run's worker takes them and the run goes on"
          : 'the run goes on once every call of it has an answer (see agent-sm approvals)',
      };
    },
  };
}
