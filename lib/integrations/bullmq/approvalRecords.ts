import type { Redis } from 'ioredis';
import { InvalidArgumentError, type ApprovalDecision, type PendingApproval } from 'agent-state-machine';
import { approvalChannel, type BatchKeys } from './batchKeys';
import { runScript } from './redisScripts';

/** A run of the batch parked for approval, on the batch's events: its request's id (`r`), its calls, and when it asked (`s`, epoch ms; absent from a worker of an earlier version). */
export interface ApprovalEvent {
  t: 'a';
  i: number;
  r: string;
  c: PendingApproval[];
  s?: number;
}

/** An answer as Redis keeps it: the decision, who gave it (`by`) and when (`at`, epoch ms), when the answerer said. */
export type RecordedDecision = ApprovalDecision & { by?: string; at?: number };

/** One Redis operation, bounded by its caller. */
export type Within = <T>(what: string, operation: () => Promise<T>) => Promise<T>;

/** Where a run's approval request lives: its batch's keys and channel, its index, the request's id. */
export interface ApprovalPlace {
  redis: Redis;
  keys: BatchKeys;
  prefix: string;
  name: string;
  batchId: string;
  index: number;
  /** `<attempt>.<park>`: unique over the run's attempts, so that no answer reaches a later request. */
  requestId: string;
}

/**
 * The key a worker's ParkWatch waits on for the answers to one request of a run: each request
 * its own, so that a waiter of an earlier request of the run (still registered: its turn ended
 * first, or it was an earlier attempt's) never shares its read with a later one.
 */
export function approvalWatchKey(keys: BatchKeys, index: number, requestId: string): string {
  return `${runApprovalsKey(keys, index)}${requestId}`;
}

/**
 * What the watch keys of every request of a run begin with: the approval channel's message
 * names the run, not the request (as every version of the worker reads it), so a worker reads
 * each request of that run it waits on.
 */
export function runApprovalsKey(keys: BatchKeys, index: number): string {
  return `${keys.approvals}#${index}#`;
}

/** Opens a run's approval request in Redis, and tells the batch's followers (its producer's `onApproval`). */
export async function askApproval(place: ApprovalPlace, calls: PendingApproval[], within: Within): Promise<void> {
  const { redis, keys, index, requestId } = place;
  const event: ApprovalEvent = { t: 'a', i: index, r: requestId, c: calls, s: Date.now() };
  const reply = (await within(`asking approval for run ${index}`, () =>
    runScript(
      redis,
      'asmAsk',
      [keys.budget, keys.approvals, keys.events],
      [
        index,
        // Each call's tool and input (`k`) too: a later attempt's request takes an answer to this one only for the same call.
        JSON.stringify({
          r: requestId,
          c: calls.map((c) => c.callId),
          k: calls.map((c) => JSON.stringify([c.name, c.input ?? null])),
        }),
        JSON.stringify(event),
      ],
    ),
  )) as string[];
  if (reply[0] === '!missing')
    throw new Error(`the batch's budget is gone from Redis (${keys.budget}): its approval request cannot be made`);
}

/** The answers to every call of a run's request, in call order; undefined while one is missing. */
export async function readDecisions(
  place: ApprovalPlace,
  callIds: readonly string[],
  within: Within,
): Promise<ApprovalDecision[] | undefined> {
  const { redis, keys, index, requestId } = place;
  const answers = await within(`reading the answers to run ${index}'s approval request`, () =>
    redis.hmget(keys.approvals, ...callIds.map((id) => answerField(index, requestId, id))),
  );
  if (answers.some((a) => a === null)) return undefined;
  return answers.map((a) => JSON.parse(a!) as ApprovalDecision);
}

/**
 * Closes a run's request (it went on, or ended): a late answer is refused, and its answers go
 * from the request. The answers the run took (`taken`: it went on with them) are kept apart,
 * by call, for the refusal of a late answer to say how each call was answered.
 */
export async function closeApproval(
  place: ApprovalPlace,
  callIds: readonly string[],
  within: Within,
  taken: readonly RecordedDecision[] = [],
): Promise<void> {
  const { redis, keys, index, requestId } = place;
  await within(`closing run ${index}'s approval request`, () =>
    runScript(redis, 'asmUnask', [keys.approvals], [index, requestId, ...callIds]),
  );
  if (taken.length === 0) return;
  await within(`keeping the answers run ${index} took`, () =>
    redis.hset(keys.answered, Object.fromEntries(taken.map((d) => [`${index}:${d.callId}`, JSON.stringify(d)]))),
  );
}

/** The answers run `index` took and went on with, by call id (`closeApproval`'s `taken`). */
export async function readTakenAnswers(
  place: Pick<ApprovalPlace, 'redis' | 'keys' | 'index'>,
  within: Within,
): Promise<Map<string, RecordedDecision>> {
  const { redis, keys, index } = place;
  const mine = `${index}:`;
  const taken = new Map<string, RecordedDecision>();
  // Only this run's fields cross the wire: the hash holds every run of the batch.
  let cursor = '0';
  do {
    const [next, flat] = await within(`reading the answers run ${index} took`, () =>
      redis.hscan(keys.answered, cursor, 'MATCH', `${mine}*`, 'COUNT', 200),
    );
    for (let i = 0; i + 1 < flat.length; i += 2)
      taken.set(flat[i]!.slice(mine.length), JSON.parse(flat[i + 1]!) as RecordedDecision);
    cursor = next;
  } while (cursor !== '0');
  return taken;
}

/** The field of the approvals hash that holds the answer to `callId` of a run's request. */
export function answerField(index: number, requestId: string, callId: string): string {
  return `${index}:${requestId}:${callId}`;
}

/**
 * Records one answer to a run's open request, from any process, and, once every call has one,
 * tells the workers (the run's own takes it). Rejects, naming the call, an answer to a call
 * that is not one of the request's, one answered already (here or by another process: the
 * error says how, by whom and when), and one to a run that has gone on or ended. Resolves with
 * whether every call of the request has its answer now.
 */
export async function decideApproval(
  place: ApprovalPlace & { taskId: string },
  decision: RecordedDecision,
  within: Within,
): Promise<{ complete: boolean }> {
  const { redis, keys, prefix, name, batchId, index, requestId, taskId } = place;
  const { callId } = decision;
  const reply = (await within(`answering ${callId} of run ${taskId}`, () =>
    runScript(redis, 'asmDecide', [keys.budget, keys.approvals], [index, requestId, callId, JSON.stringify(decision)]),
  )) as string[];
  switch (reply[0]) {
    case '!missing':
      throw new Error(
        `batch ${batchId}: its budget is not in Redis (${keys.budget}): its keys expired or were deleted`,
      );
    case '!closed':
      throw new InvalidArgumentError(
        'callId',
        `a call of a run still waiting (run ${taskId} has gone on or ended)`,
        callId,
      );
    case '!unknown':
      throw new InvalidArgumentError(
        'callId',
        `the id of a call run ${taskId} waits on (${reply.slice(1).join(', ')})`,
        callId,
      );
    case '!answered': {
      const given = await within(`reading the answer to ${callId} of run ${taskId}`, () =>
        redis.hget(keys.approvals, answerField(index, requestId, callId)),
      ).catch(() => null);
      throw new InvalidArgumentError(
        'callId',
        `a call not answered yet (it was answered already${given === null ? '' : `: ${describeAnswer(JSON.parse(given) as RecordedDecision)}`})`,
        callId,
      );
    }
  }
  const complete = reply[1] === reply[2];
  if (complete)
    await within('telling the workers', () => redis.publish(approvalChannel(prefix, name), `${batchId}:${index}`));
  return { complete };
}

/** How an answer went, by whom and when, as far as it says: `approved by alice at 2026-…`. */
export function describeAnswer(answer: { approved: boolean; by?: string; at?: number }): string {
  return (
    `${answer.approved ? 'approved' : 'denied'}` +
    `${answer.by === undefined ? '' : ` by ${answer.by}`}` +
    `${answer.at === undefined ? '' : ` at ${new Date(answer.at).toISOString()}`}`
  );
}
