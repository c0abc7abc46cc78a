import type { Command } from 'commander';
import { AnsweredAlreadyError, writeAnswer } from '../batch/approvalAnswers';
import { readWaitingApprovals, type WaitingCall } from '../batch/waitingApprovals';
import { escapeControl } from '../internal/escapeControl';
import { formatDuration } from '../internal/formatDuration';
import { cut, plural } from '../internal/text';
import { InvalidArgumentError } from '../machine/InvalidArgumentError';

/** How many ids an error lists before `…`. */
const LISTED = 10;

/**
 * `agent-sm approvals <folder> [--json]`: the tool calls the runs of a folder batch wait on —
 * the run, the call, the tool, its input and how long it has waited. `agent-sm approve <folder>
 * <run> [<callId>]` and `agent-sm deny <folder> <run> [<callId>] [--reason TEXT]` answer one
 * call, or every call of the run not answered yet, through the folder's answers
 * (`writeAnswer`): the running batch takes each within a poll, a batch resumed later when the
 * run waits again. An unknown run or call, a run that does not wait, a call answered already:
 * an error naming it (exit 2).
 */
export function addApprovalsCommands(
  program: Command,
  io: { stdout: (text: string) => void; json: (value: unknown) => string },
  clock: () => number = Date.now,
): void {
  program
    .command('approvals')
    .description(
      'List the tool calls the runs of a batch wait on for approval: run, call, tool, input, how long it waited.',
    )
    .argument('<folder>', "the batch's history folder (with its batch.json)")
    .option('--json', 'print them as JSON')
    .action(async (folder: string, opts: { json?: boolean }) => {
      const found = await readWaitingApprovals(folder);
      const now = clock();
      if (opts.json === true) {
        const calls = found.calls.map((c) => ({
          run: c.run,
          callId: c.callId,
          tool: c.tool,
          ...('input' in c ? { input: c.input } : {}),
          since: new Date(c.since).toISOString(),
          waitedMs: Math.max(0, now - c.since),
          ...(c.answer === undefined
            ? {}
            : {
                answer: {
                  approved: c.answer.approved,
                  ...(c.answer.reason === undefined ? {} : { reason: c.answer.reason }),
                  taken: c.answer.taken,
                },
              }),
        }));
        io.stdout(`${io.json({ folder, running: found.running, calls, problems: found.problems })}\n`);
        return;
      }
      const out: string[] = [];
      const where = escapeControl(folder);
      if (found.calls.length === 0) out.push(`agent-sm: no run of the batch in ${where} waits for approval`);
      else {
        out.push(
          `${plural(found.calls.length, 'tool call')} wait for approval in ${where} (${found.running ? 'its batch is running' : 'no batch runs there now'}); ` +
            `answer with agent-sm approve|deny ${where} <run> [<callId>]`,
        );
        for (const c of found.calls) out.push(`  ${callLine(c, now)}`);
      }
      for (const problem of found.problems) out.push(`  ! ${escapeControl(problem)}`);
      io.stdout(`${out.join('\n')}\n`);
    });

  for (const verb of ['approve', 'deny'] as const) {
    const command = program
      .command(verb)
      .description(
        verb === 'approve'
          ? 'Approve a tool call a run of a batch waits on (or every call of the run): the run goes on and the tool runs.'
          : 'Deny a tool call a run of a batch waits on (or every call of the run): it does not run; the LLM gets "denied: <reason>".',
      )
      .argument('<folder>', "the batch's history folder (with its batch.json)")
      .argument('<run>', 'the run: its task id (see agent-sm approvals)')
      .argument('[callId]', 'the call to answer (default: every call of the run not answered yet)');
    if (verb === 'deny')
      command.option('--reason <text>', 'why: the LLM gets "denied: <reason>"', 'denied by a person');
    command.action(async (folder: string, run: string, callId: string | undefined, opts: { reason?: string }) => {
      const answered = await answer(folder, run, callId, verb === 'approve', opts.reason, clock);
      const found = answered.running
        ? 'the running batch takes it within a second'
        : 'no batch runs there now: resuming it (runBatch with resume: true) takes it when the run waits again';
      const calls = answered.calls.map((c) => `${escapeControl(c.callId)} (${escapeControl(c.tool)})`).join(', ');
      io.stdout(
        `agent-sm: ${verb === 'approve' ? 'approved' : 'denied'} ${plural(answered.calls.length, 'call')} of run ${escapeControl(run)}: ${calls}; ${found}\n`,
      );
    });
  }
}

/** Writes the answer to `callId` of `run` (or to each of its calls not answered yet), after checking that it waits. */
async function answer(
  folder: string,
  run: string,
  callId: string | undefined,
  approved: boolean,
  reason: string | undefined,
  clock: () => number,
): Promise<{ running: boolean; calls: WaitingCall[] }> {
  const found = await readWaitingApprovals(folder);
  if (!found.runs.includes(run))
    throw new InvalidArgumentError(
      'run',
      `the id of a run of the batch in ${escapeControl(folder)} (${listed(found.runs)})`,
      run,
    );
  const waiting = found.calls.filter((c) => c.run === run);
  if (waiting.length === 0) {
    // Answered from here before, and taken: the run went on with that answer.
    const given = found.answers.filter((a) => a.run === run && (callId === undefined || a.callId === callId));
    const last = given.sort((a, b) => b.at - a.at)[0];
    if (last !== undefined)
      throw new AnsweredAlreadyError(last, last, 'the run has gone on with it; nothing waits for another answer');
    throw new Error(
      `run ${escapeControl(run)} does not wait for approval (its history does not end in AwaitingApproval: ` +
        'it went on, ended or has not started); there is nothing to answer — see agent-sm approvals ' +
        `${escapeControl(folder)} for the calls that wait`,
    );
  }
  let targets: WaitingCall[];
  if (callId !== undefined) {
    const call = waiting.find((c) => c.callId === callId);
    if (call === undefined)
      throw new InvalidArgumentError(
        'callId',
        `the id of a call run ${escapeControl(run)} waits on (${listed(waiting.map((c) => c.callId))})`,
        callId,
      );
    targets = [call];
  } else {
    targets = waiting.filter((c) => c.answer === undefined);
    if (targets.length === 0)
      throw new Error(
        `every call run ${escapeControl(run)} waits on was answered already (${listed(waiting.map((c) => c.callId))}): ` +
          'an answer is taken once; the batch takes them within a second, or when it resumes',
      );
  }
  const at = clock();
  for (const call of targets) {
    const given = {
      run,
      callId: call.callId,
      approved,
      ...(approved ? {} : { reason: reason ?? 'denied by a person' }),
      at,
      waitingSince: call.since,
    };
    if (call.answer !== undefined) throw new AnsweredAlreadyError(given, call.answer);
    writeAnswer(folder, given);
  }
  return { running: found.running, calls: targets };
}

function callLine(c: WaitingCall, now: number): string {
  const input = 'input' in c ? ` ${cut(escapeControl(JSON.stringify(c.input) ?? 'undefined'), 200)}` : '';
  const answered =
    c.answer === undefined
      ? ''
      : ` — ${c.answer.approved ? 'approved' : 'denied'}, ${c.answer.taken ? 'taken by the batch' : 'not taken yet'}`;
  return `${escapeControl(c.run)}  ${escapeControl(c.callId)}  ${escapeControl(c.tool)}${input}  waiting ${formatDuration(Math.max(0, now - c.since))}${answered}`;
}

function listed(ids: readonly string[]): string {
  const shown = ids.slice(0, LISTED).map(escapeControl).join(', ');
  return ids.length > LISTED ? `${shown}, …` : shown;
}
