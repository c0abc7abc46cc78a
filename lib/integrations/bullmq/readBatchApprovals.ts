import type { Redis } from 'ioredis';
import { InvalidArgumentError } from 'agent-state-machine';
import { assertKnownOptions } from 'agent-state-machine/internal';
import { keysOn, OPTION_DEFAULTS } from '../../internal/optionTable';
import { answerField, type ApprovalEvent, type RecordedDecision, type Within } from './approvalRecords';
import { batchKeys, isBatchId, type BatchKeys } from './batchKeys';
import { addressOf, assertMs, assertQueueName, bounded, openRedis, type RedisConnection } from './connection';
import { findBatch } from './findBatch';

/** Where a BullMQ batch is: `readBatchApprovals` and `answerBatchApproval` take these. */
export interface BatchPlaceOptions {
  /** Redis: a URL, ioredis options or an ioredis client (duplicated, never closed). */
  connection: RedisConnection;
  /** The batch's id. */
  batchId: string;
  /** The queue the batch was submitted to. Default: the one queue in Redis that holds a batch of this id. */
  name?: string;
  /** BullMQ's key prefix, with `name`. Default `bull`; found with the queue when `name` is left out. */
  prefix?: string;
  /** How long each Redis operation waits for an unreachable Redis. Default 10,000 ms. */
  timeoutMs?: number;
}

/** A tool call a run of a BullMQ batch waits on, parked on its worker for a person's answer. */
export interface BatchWaitingCall {
  /** The run: its task id. */
  run: string;
  /** The task's index in the batch. */
  index: number;
  callId: string;
  /** The tool's name. */
  tool: string;
  /** The call's input as the LLM gave it (absent when it gave none). */
  input?: unknown;
  /** When the run asked, epoch milliseconds (absent when its worker did not say: an earlier version). */
  since?: number;
  /** The answer given to it and not taken yet: the run takes its answers once every call of its request has one. */
  answer?: { approved: boolean; reason?: string; by?: string; at?: number };
}

/** The approvals of a BullMQ batch: its runs and the calls they wait on. */
export interface BatchApprovals {
  batchId: string;
  /** Its queue and BullMQ prefix. */
  name: string;
  prefix: string;
  /** Runs of the batch are still to be reported: its workers take answers as they come. */
  running: boolean;
  /** Every run (task id) of the batch, in task order. */
  runs: string[];
  /** The calls waiting, in task order then call order (answered ones too, until their run takes them). */
  calls: BatchWaitingCall[];
}

/** An open request of a run, as the approvals hash and the batch's events hold it. */
export interface OpenBatchRequest {
  index: number;
  requestId: string;
  calls: BatchWaitingCall[];
}

/** What `withBatchApprovals` hands its caller: the batch's connection, keys, ids and open requests. */
export interface BatchApprovalsContext {
  redis: Redis;
  keys: BatchKeys;
  prefix: string;
  name: string;
  batchId: string;
  ids: string[];
  running: boolean;
  open: OpenBatchRequest[];
  within: Within;
}

/** The options that say where a batch is. */
const PLACE_OPTION_KEYS = keysOn('approvals');

/**
 * Opens the batch `options` name in Redis, reads its runs and the approval requests open now
 * (each call with its tool, input, when its run asked and the answer given so far), and hands
 * them to `use`; the connection is closed after. Rejects naming the batch when no queue holds
 * it. Its caller checked that `options` is an object of known keys.
 */
export async function withBatchApprovals<T>(
  options: BatchPlaceOptions,
  caller: string,
  use: (context: BatchApprovalsContext) => Promise<T>,
): Promise<T> {
  const { connection, batchId, timeoutMs = OPTION_DEFAULTS.timeoutMs } = options;
  if (!isBatchId(batchId)) throw new InvalidArgumentError('batchId', "a batch's id", batchId);
  if (options.name !== undefined) assertQueueName(options.name);
  if (options.prefix !== undefined && (typeof options.prefix !== 'string' || options.prefix === ''))
    throw new InvalidArgumentError('prefix', "BullMQ's key prefix (a non-empty string)", options.prefix);
  assertMs('timeoutMs', timeoutMs);
  const redis = openRedis(connection);
  const within: Within = (what, operation) =>
    bounded(redis, `${caller}: batch ${batchId}: ${what}`, operation, timeoutMs);
  try {
    const where =
      options.name !== undefined
        ? { prefix: options.prefix ?? 'bull', name: options.name }
        : await findBatch(redis, batchId, options.prefix, within);
    const keys = batchKeys(where.prefix, where.name, batchId);
    const [idsJson, reported, hash] = await within('reading its runs and approvals', () =>
      Promise.all([redis.get(keys.ids), redis.hlen(keys.results), redis.hgetall(keys.approvals)]),
    );
    if (idsJson === null)
      throw new Error(
        `no batch ${batchId} on queue ${where.name} (prefix ${where.prefix}) in Redis at ${addressOf(redis)}: never submitted, or its keys expired`,
      );
    const ids = JSON.parse(idsJson) as string[];
    const open = await openRequests(redis, keys, ids, hash, within);
    return await use({ redis, keys, ...where, batchId, ids, running: reported < ids.length, open, within });
  } finally {
    redis.disconnect();
  }
}

/** The calls of every open request in `hash` (the approvals hash), described by the run's `a` event of that request. */
async function openRequests(
  redis: Redis,
  keys: BatchKeys,
  ids: readonly string[],
  hash: Record<string, string>,
  within: Within,
): Promise<OpenBatchRequest[]> {
  const requests = new Map<number, { r: string; c: string[] }>();
  for (const [field, value] of Object.entries(hash))
    if (/^\d+$/.test(field)) requests.set(Number(field), JSON.parse(value) as { r: string; c: string[] });
  if (requests.size === 0) return [];
  // Each request's calls as its run asked them (tool, input, when): its `a` event.
  const asked = new Map<number, ApprovalEvent>();
  for (let from = 0; ; from += 1000) {
    const lines = await within('reading its events', () => redis.lrange(keys.events, from, from + 999));
    for (const line of lines) {
      if (!line.includes('"t":"a"')) continue;
      const event = JSON.parse(line) as ApprovalEvent;
      if (event.t === 'a' && requests.get(event.i)?.r === event.r) asked.set(event.i, event);
    }
    if (lines.length < 1000) break;
  }
  return [...requests.entries()]
    .sort(([a], [b]) => a - b)
    .map(([index, request]) => {
      const event = asked.get(index);
      return {
        index,
        requestId: request.r,
        calls: request.c.map((callId): BatchWaitingCall => {
          const call = event?.c.find((c) => c.callId === callId);
          const given = hash[answerField(index, request.r, callId)];
          const answer = given === undefined ? undefined : (JSON.parse(given) as RecordedDecision);
          return {
            run: ids[index] ?? String(index),
            index,
            callId,
            tool: call?.name ?? '?',
            ...(call !== undefined && 'input' in call ? { input: call.input } : {}),
            ...(event?.s === undefined ? {} : { since: event.s }),
            ...(answer === undefined
              ? {}
              : {
                  answer: {
                    approved: answer.approved,
                    ...(answer.approved ? {} : { reason: answer.reason }),
                    ...(answer.by === undefined ? {} : { by: answer.by }),
                    ...(answer.at === undefined ? {} : { at: answer.at }),
                  },
                }),
          };
        }),
      };
    });
}

/**
 * The tool calls the runs of a BullMQ batch wait on, parked on their workers for approval
 * (`startBatchWorker({ approve })`, `submitBatch({ approve })`, or a framework's own with
 * `run`), from any process: each with its tool, input, when its run asked and the answer given
 * so far — what `agent-sm approvals --redis URL <batchId>` lists. Rejects naming the batch when no queue in Redis holds it.
 */
export async function readBatchApprovals(options: BatchPlaceOptions): Promise<BatchApprovals> {
  if (typeof options !== 'object' || options === null)
    throw new InvalidArgumentError('options', 'an object { connection, batchId, … }', options);
  assertKnownOptions(options, PLACE_OPTION_KEYS, 'readBatchApprovals()');
  return withBatchApprovals(options, 'readBatchApprovals', async (batch) => ({
    batchId: batch.batchId,
    name: batch.name,
    prefix: batch.prefix,
    running: batch.running,
    runs: batch.ids,
    calls: batch.open.flatMap((r) => r.calls),
  }));
}
