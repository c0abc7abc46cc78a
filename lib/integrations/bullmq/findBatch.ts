import type { Redis } from 'ioredis';
import { InvalidArgumentError } from 'agent-state-machine';
import { addressOf } from './connection';

/**
 * The queue (and prefix) of the one batch of id `batchId` in Redis, found by its budget key
 * (`<prefix>:<name>:asm:<id>:budget`), within `prefix` when given. Rejects naming the batch when
 * no queue holds it, and naming the queues when more than one does (the caller then names one).
 */
export async function findBatch(
  redis: Redis,
  batchId: string,
  prefix: string | undefined,
  within: <T>(what: string, operation: () => Promise<T>) => Promise<T>,
): Promise<{ prefix: string; name: string }> {
  const suffix = `:asm:${batchId}:budget`;
  const found = new Set<string>();
  let cursor = '0';
  do {
    const [next, keys] = await within('finding its queue', () =>
      redis.scan(
        cursor,
        'MATCH',
        `${prefix === undefined ? '*' : `${globEscape(prefix)}:*`}${globEscape(suffix)}`,
        'COUNT',
        1000,
      ),
    );
    cursor = next;
    for (const key of keys) found.add(key.slice(0, -suffix.length));
  } while (cursor !== '0');
  // Sorted: SCAN's order is Redis's, and the message should read the same each time.
  const places = [...found].sort().map((base) => {
    // A queue name has no `:`; the prefix is what comes before it.
    const at = base.lastIndexOf(':');
    return { prefix: base.slice(0, at), name: base.slice(at + 1) };
  });
  if (places.length === 1) return places[0]!;
  if (places.length === 0)
    throw new Error(`no batch ${batchId} in Redis at ${addressOf(redis)}: never submitted, or its keys expired`);
  // The value is the batch id the caller gave: `name` itself was left out.
  throw new InvalidArgumentError(
    'batchId',
    `the id of a batch on one queue, or given with its queue: batch ${batchId} is on ${places.length} queues (${places.map((p) => `prefix ${p.prefix}, queue ${p.name}`).join('; ')}); give \`name\` and \`prefix\` (on the command line, --queue and --prefix)`,
    batchId,
  );
}

function globEscape(text: string): string {
  return text.replace(/[*?[\]\\]/g, '\\$&');
}
