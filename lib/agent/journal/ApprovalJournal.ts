import { plural } from '../../internal/text';
import type { ToolCall } from '../AgentLoop';
import { ApprovalGate, type ApprovalDecision } from '../ApprovalGate';
import type { ApprovalAskedJournalEntry, ApprovalJournalEntry, JournalEntry } from './JournalEntry';
import type { RecordedLine, RunRecording } from './RunRecording';

/** The run's writer of kept lines (the ledger's): an `approval` line's commit, when its sink gives one. */
export type KeptLineWriter = (entry: JournalEntry) => PromiseLike<void> | undefined | void | null;

/**
 * A run's approval answers in its journal, the same for both drivers (the adapter's `approve`,
 * a mirror's framework approvals): each answer is written as an `approval` line when it is
 * taken, before the tool can run (`write`; the run goes on once `commits()` are kept), and a
 * run resumed from an interrupted attempt's journal takes the answers that attempt journaled
 * instead of asking again (`recorded`). What happens to an approved call that may have been
 * running at the cut is the resume's tool policy (`RunRecording`). A call whose tool asked from
 * inside itself is journaled as asked before the run parks (`ask`): a resume re-asks it instead
 * of taking it for a tool cut off while it ran (`asked`).
 */
export class ApprovalJournal {
  /** How the interrupted attempt answered its calls, by call id, in order (see `recordedDecisions`). */
  readonly #recorded: Map<string, ApprovalDecision[]>;
  readonly #recording: RunRecording | undefined;
  /** Whether those answers are the journal's `approval` lines (not read from its tool lines). */
  readonly #answerLines: boolean;
  /** The calls the interrupted attempt journaled as asked inside their tool, by call id: how many times, not taken yet. */
  readonly #askedCalls = new Map<string, number>();
  /** The commits of the lines written since `commits()` last took them. */
  #commits: PromiseLike<void>[] = [];

  /** `journal`: the interrupted attempt's lines (`resumeFrom.journal`), when the run resumes one through `recording`. */
  constructor(journal: readonly RecordedLine[] | undefined, recording: RunRecording | undefined) {
    this.#recorded = recordedDecisions(journal ?? []);
    this.#answerLines = (journal ?? []).some((line) => line.type === 'approval');
    for (const line of journal ?? []) {
      const { callId, asked } = line as { callId?: unknown; asked?: unknown };
      if (line.type === 'approval' && asked === true && typeof callId === 'string')
        this.#askedCalls.set(callId, (this.#askedCalls.get(callId) ?? 0) + 1);
    }
    this.#recording = recording;
  }

  /** Whether the interrupted attempt's `approval` lines hold an answer to `callId` not taken yet (answers read from tool lines do not count). */
  answers(callId: string): boolean {
    return this.#answerLines && (this.#recorded.get(callId)?.length ?? 0) > 0;
  }

  /** Whether the interrupted attempt journaled `callId` as asked inside its tool, and no wait of this run took it yet. */
  asked(callId: string): boolean {
    return (this.#askedCalls.get(callId) ?? 0) > 0;
  }

  /**
   * The answers the interrupted attempt journaled to `calls` (one wait), in call order, each
   * taken once. A tool runs only once every call of its wait has an answer: when one of
   * `calls` has none, no call of `held` (those whose start waited on these answers; default
   * `calls`) started before the cut, so each runs once answered instead of being answered as
   * cut off.
   */
  recorded(calls: readonly ToolCall[], held: readonly ToolCall[] = calls): ApprovalDecision[] {
    const known: ApprovalDecision[] = [];
    for (const call of calls) {
      const times = this.#askedCalls.get(call.id) ?? 0;
      if (times > 0) this.#askedCalls.set(call.id, times - 1);
      const decision = this.#recorded.get(call.id)?.shift();
      if (decision !== undefined) known.push(decision);
    }
    if (known.length < calls.length) for (const call of held) this.#recording?.waitedForApproval(call.id);
    return known;
  }

  /**
   * The AwaitingApproval move of a wait for `calls`, of which `known` were answered from the
   * journal: the calls still asked in its data (all of them when none is), with the ids of
   * those taken from the journal.
   */
  waitMove(
    calls: readonly ToolCall[],
    known: readonly ApprovalDecision[],
  ): { description: string; data: Record<string, unknown> } {
    const asked = calls.filter((c) => !known.some((d) => d.callId === c.id));
    const waits = asked.length > 0 ? asked : calls;
    return {
      description:
        `waiting for approval of ${plural(waits.length, 'tool call')}: ${waits.map((c) => c.name).join(', ')}` +
        (known.length === 0 ? '' : ` (${plural(known.length, 'answer')} taken from the journal)`),
      data: {
        calls: new ApprovalGate(waits).pending,
        ...(known.length === 0 ? {} : { fromJournal: known.map((d) => d.callId) }),
      },
    };
  }

  /**
   * Journals an answer to `call` as it is taken, before the tool can run: an `approval` line
   * through `write` (nothing when the run keeps no journal), its commit kept for `commits()`.
   * One taken from the journal is journaled again (`fromJournal`), as a served response is: a
   * second cut finds it in the newest attempt's file.
   */
  write(
    write: KeptLineWriter | undefined,
    turn: number,
    call: ToolCall | undefined,
    decision: ApprovalDecision,
    at: number,
    fromJournal: boolean,
  ): void {
    if (write === undefined) return;
    const line: ApprovalJournalEntry = {
      type: 'approval',
      turn,
      callId: decision.callId,
      name: call?.name ?? '',
      approved: decision.approved,
      ...(decision.approved ? {} : { reason: decision.reason }),
      ...(decision.approved && 'input' in decision && decision.input !== undefined ? { input: decision.input } : {}),
      at,
      ...(decision.by === undefined ? {} : { by: decision.by }),
      ...(fromJournal ? { fromJournal: true as const } : {}),
    };
    const commit = write(line);
    if (commit !== undefined && commit !== null) this.#commits.push(commit);
  }

  /**
   * Journals that `call`'s tool asked for approval from inside itself, before the run parks: an
   * `approval` line with `asked: true` through `write` (nothing when the run keeps no journal),
   * kept as an answer is, so a cut while parked finds it (`asked`).
   */
  ask(write: KeptLineWriter | undefined, turn: number, call: ToolCall, at: number): void {
    if (write === undefined) return;
    const line: ApprovalAskedJournalEntry = {
      type: 'approval',
      turn,
      callId: call.id,
      name: call.name,
      ...(call.input === undefined ? {} : { input: call.input }),
      asked: true,
      at,
    };
    const commit = write(line);
    if (commit !== undefined && commit !== null) this.#commits.push(commit);
  }

  /** The commits of the lines written since the last call (taken: the next call gives only newer ones). */
  commits(): PromiseLike<void>[] {
    const commits = this.#commits;
    this.#commits = [];
    return commits;
  }
}

/**
 * How an interrupted attempt answered its calls, from its journal, by call id in the order
 * given (a loop may repeat an id across rounds): its `approval` lines. A journal written before
 * those lines existed says it by the tool lines: a call with a result (`ok` or `error`) ran, so
 * it was approved; one `not_run` with `denied: <reason>` was denied.
 */
function recordedDecisions(journal: readonly RecordedLine[]): Map<string, ApprovalDecision[]> {
  const decided = new Map<string, ApprovalDecision[]>();
  const add = (decision: ApprovalDecision): void => {
    const list = decided.get(decision.callId) ?? [];
    list.push(decision);
    decided.set(decision.callId, list);
  };
  if (journal.some((line) => line.type === 'approval')) {
    for (const line of journal) {
      // A question (`asked: true`) has no `approved`: it is skipped as no answer.
      if (line.type !== 'approval') continue;
      const { callId, approved, reason, input, by } = line as {
        callId?: unknown;
        approved?: unknown;
        reason?: unknown;
        input?: unknown;
        by?: unknown;
      };
      if (typeof callId !== 'string' || typeof approved !== 'boolean') continue;
      // Who answered goes on into the resumed run's journal with the answer.
      const who = typeof by === 'string' && by !== '' ? { by } : {};
      add(
        approved
          ? { callId, approved: true, ...(input === undefined ? {} : { input }), ...who }
          : { callId, approved: false, reason: typeof reason === 'string' ? reason : 'denied by a person', ...who },
      );
    }
    return decided;
  }
  for (const line of journal) {
    if (line.type !== 'tool' || line.call === undefined) continue;
    const output = (line.result as { output?: unknown } | undefined)?.output;
    if (line.status === 'ok' || line.status === 'error') add({ callId: line.call.id, approved: true });
    else if (line.status === 'not_run' && typeof output === 'string' && output.startsWith('denied: '))
      add({ callId: line.call.id, approved: false, reason: output.slice('denied: '.length) });
  }
  return decided;
}
