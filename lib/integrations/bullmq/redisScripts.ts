import type { Redis } from 'ioredis';
import { ASK, DECIDE, UNASK } from './approvalScripts';
import { BEGIN, CREATE, FIGURES, RAISE, RECORD, SKIP, STEP, TRIP } from './scripts';

const SCRIPTS = {
  asmStep: [STEP, 2],
  asmBegin: [BEGIN, 6],
  asmRecord: [RECORD, 11],
  asmSkip: [SKIP, 11],
  asmCreate: [CREATE, 3],
  asmTrip: [TRIP, 1],
  asmRaise: [RAISE, 3],
  asmFigures: [FIGURES, 1],
  asmAsk: [ASK, 3],
  asmDecide: [DECIDE, 2],
  asmUnask: [UNASK, 1],
} as const;
type ScriptName = keyof typeof SCRIPTS;
const defined = new WeakSet<Redis>();

/**
 * Runs one of the batch's Lua scripts: one round trip (EVALSHA, with ioredis falling back to
 * EVAL once when Redis does not know the script yet, e.g. after a restart).
 */
export async function runScript(
  redis: Redis,
  name: ScriptName,
  keys: readonly string[],
  args: ReadonlyArray<string | number>,
): Promise<unknown> {
  if (!defined.has(redis)) {
    for (const [n, [lua, numberOfKeys]] of Object.entries(SCRIPTS)) redis.defineCommand(n, { lua, numberOfKeys });
    defined.add(redis);
  }
  const command = (redis as unknown as Record<ScriptName, (...a: Array<string | number>) => Promise<unknown>>)[name];
  return command.call(redis, ...keys, ...args);
}
