import * as os from 'node:os';
import type { Command } from 'commander';
import { escapeControl } from '../internal/escapeControl';
import { formatDuration } from '../internal/formatDuration';
import { cut, plural } from '../internal/text';
import type { ApprovalsPlace, ListedCall } from './ApprovalsPlace';
import { folderApprovals } from './folderApprovals';
import { redisApprovals } from './redisApprovals';
import { storeApprovals } from './storeApprovals';
import { storeFor } from './storeCommands';
import type { RunStore } from '../batch/keeping/RunStore';

/** The options that say where a batch is, besides its folder. */
interface PlaceOptions {
  redis?: string;
  store?: string;
  queue?: string;
  prefix?: string;
}

/**
 * `agent-sm approvals <folder> [--json]` (or `--redis URL <batchId>`, `--store URL <batchId>`):
 * the tool calls the runs of a batch wait on — the run, the call, the tool, its input, how long
 * it has waited, and the answers given and not taken yet (by whom). `agent-sm approve <folder>
 * <run> [<callId>]` and `agent-sm deny <folder> <run> [<callId>] [--reason TEXT]` (with the
 * same `--redis` or `--store`) answer one call, or every call of the run not answered yet, as
 * `--by NAME` (default: the user's login name): through the folder's answers, the BullMQ
 * batch's records in Redis, or the store's. An answer is taken once: an unknown batch, run or
 * call, a run that does not wait, a call answered already — an error naming it (exit 2).
 */
export function addApprovalsCommands(
  program: Command,
  io: { stdout: (text: string) => void; json: (value: unknown) => string; opened: RunStore[] },
  clock: () => number = Date.now,
): void {
  const placeOptions = (command: Command): Command =>
    command
      .option(
        '--redis <url>',
        "a BullMQ batch: the Redis it is in (redis://host:port); give the batch's id for <folder>",
      )
      .option('--store <url>', "a store's batch (file:///… or postgres://…); give the batch's id for <folder>")
      .option('--queue <name>', 'with --redis: its queue (default: the one queue holding a batch of this id)')
      .option('--prefix <prefix>', "with --redis: BullMQ's key prefix (default bull, or found with the queue)");
  placeOptions(
    program
      .command('approvals')
      .description(
        'List the tool calls the runs of a batch wait on for approval: run, call, tool, input, how long it waited.',
      )
      .argument(
        '<folder>',
        "the batch's history folder (with its batch.json); or, with --redis or --store, the batch's id",
      ),
  )
    .option('--json', 'print them as JSON')
    .action(async (target: string, opts: PlaceOptions & { json?: boolean }) => {
      const place = placeOf(target, opts, clock, (url) => storeFor(url, io));
      const found = await place.list();
      const now = clock();
      if (opts.json === true) {
        const calls = found.calls.map((c) => ({
          run: c.run,
          callId: c.callId,
          tool: c.tool,
          ...('input' in c ? { input: c.input } : {}),
          ...(c.since === undefined
            ? {}
            : { since: new Date(c.since).toISOString(), waitedMs: Math.max(0, now - c.since) }),
          ...(c.answer === undefined ? {} : { answer: c.answer }),
        }));
        io.stdout(`${io.json({ ...found.names, running: found.running, calls, problems: found.problems })}\n`);
        return;
      }
      const out: string[] = [];
      if (found.calls.length === 0) out.push(`agent-sm: no run of ${place.batch} waits for approval`);
      else {
        out.push(
          `${plural(found.calls.length, 'tool call')} wait for approval ${place.where} (${found.running ? 'its batch is running' : 'no batch runs there now'}); ` +
            `answer with ${place.answerHint}`,
        );
        for (const c of found.calls) out.push(`  ${callLine(c, now)}`);
      }
      for (const problem of found.problems) out.push(`  ! ${escapeControl(problem)}`);
      io.stdout(`${out.join('\n')}\n`);
    });

  for (const verb of ['approve', 'deny'] as const) {
    const command = placeOptions(
      program
        .command(verb)
        .description(
          verb === 'approve'
            ? 'Approve a tool call a run of a batch waits on (or every call of the run): the run goes on and the tool runs.'
            : 'Deny a tool call a run of a batch waits on (or every call of the run): it does not run; the LLM gets "denied: <reason>".',
        )
        .argument(
          '<folder>',
          "the batch's history folder (with its batch.json); or, with --redis or --store, the batch's id",
        )
        .argument('<run>', 'the run: its task id (see agent-sm approvals)')
        .argument('[callId]', 'the call to answer (default: every call of the run not answered yet)'),
    ).option('--by <name>', 'who answers, kept with the answer (default: your login name)');
    if (verb === 'deny')
      command.option('--reason <text>', 'why: the LLM gets "denied: <reason>"', 'denied by a person');
    command.action(
      async (
        target: string,
        run: string,
        callId: string | undefined,
        opts: PlaceOptions & { reason?: string; by?: string },
      ) => {
        const place = placeOf(target, opts, clock, (url) => storeFor(url, io));
        const given = await place.answer({
          run,
          callId,
          approved: verb === 'approve',
          reason: opts.reason,
          by: opts.by ?? loginName(),
        });
        const calls = given.calls.map((c) => `${escapeControl(c.callId)} (${escapeControl(c.tool)})`).join(', ');
        io.stdout(
          `agent-sm: ${verb === 'approve' ? 'approved' : 'denied'} ${plural(given.calls.length, 'call')} of run ${escapeControl(run)}: ${calls}; ${given.next}\n`,
        );
      },
    );
  }
}

/** Where the batch is: its folder, or `--redis` / `--store` with its id. */
function placeOf(
  target: string,
  opts: PlaceOptions,
  clock: () => number,
  openStore: (url: string) => Promise<RunStore>,
): ApprovalsPlace {
  if (opts.redis !== undefined && opts.store !== undefined)
    throw new Error('give --redis (a BullMQ batch) or --store (a store batch), not both');
  if (opts.store === undefined && opts.redis === undefined)
    for (const key of ['queue', 'prefix'] as const)
      if (opts[key] !== undefined) throw new Error(`--${key} is for a BullMQ batch: give --redis URL with it`);
  if (opts.redis !== undefined) return redisApprovals(opts.redis, target, { name: opts.queue, prefix: opts.prefix });
  if (opts.store !== undefined) {
    for (const key of ['queue', 'prefix'] as const)
      if (opts[key] !== undefined) throw new Error(`--${key} is for a BullMQ batch (--redis), not a store's`);
    return storeApprovals(opts.store, target, clock, openStore);
  }
  return folderApprovals(target, clock);
}

/** Who answers by default: the user's login name, else $USER; an answer never goes without a name. */
function loginName(): string {
  try {
    const name = os.userInfo().username;
    if (name !== '') return name;
  } catch {
    // No entry for this uid (a container's user): $USER, if set.
  }
  const user = process.env['USER'];
  return user !== undefined && user !== '' ? user : 'an unnamed user';
}

function callLine(c: ListedCall, now: number): string {
  const input = 'input' in c ? ` ${cut(escapeControl(JSON.stringify(c.input) ?? 'undefined'), 200)}` : '';
  const waited = c.since === undefined ? 'waiting' : `waiting ${formatDuration(Math.max(0, now - c.since))}`;
  const answered =
    c.answer === undefined
      ? ''
      : ` — ${c.answer.approved ? 'approved' : 'denied'}${c.answer.by === undefined ? '' : ` by ${escapeControl(c.answer.by)}`}, ` +
        `${c.answer.taken ? 'taken by the batch' : 'not taken yet'}`;
  return `${escapeControl(c.run)}  ${escapeControl(c.callId)}  ${escapeControl(c.tool)}${input}  ${waited}${answered}`;
}
