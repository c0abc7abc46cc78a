import { formatTime as format } from '../internal/formatTime';
import { escapeControl, escapeDeep } from '../internal/escapeControl';
import { formatDuration } from '../internal/formatDuration';
import { InvalidArgumentError } from '../machine/InvalidArgumentError';
import { formatHistory } from './formatHistory';
import type { HistorySummary, TurnSummary } from './summarizeHistory';
import type { TransitionRecord } from '../machine/TransitionRecord';
import { safeStringify } from '../internal/safeStringify';
import { cut, plural } from '../internal/text';

/** Options of `formatSummary`: the file to name, how many turns to list, the time format. */
export interface FormatSummaryOptions {
  /** The history file, named in the first line. */
  file?: string;
  /** How many of the latest turns to list. Default 10. */
  turns?: number;
  /** date-fns pattern for times of day (local time). Default `HH:mm:ss.SSS`. */
  timeFormat?: string;
}

/**
 * A summary for a person who has only the history file: the failure (or the cut-off turn)
 * first, with where, why and the moves before it; then the path of turns, where the time
 * went, forced and rejected moves, and the final state. Pure; `agent-sm inspect` prints it.
 */
export function formatSummary(given: HistorySummary, options: FormatSummaryOptions = {}): string {
  assertSummary(given);
  if (typeof options !== 'object' || options === null) throw new InvalidArgumentError('options', 'an object', options);
  const { turns: turnCount = 10, timeFormat = 'HH:mm:ss.SSS' } = options;
  // Every string from the run (ids, states, descriptions) is shown escaped, so none can add a
  // line or drive the terminal; data is escaped after it is turned into JSON.
  const summary = escapeDeep(given, DATA);
  const file = options.file === undefined ? undefined : escapeControl(String(options.file));
  const time = (at: number): string => format(at, timeFormat);
  const out: string[] = [];
  const { meta } = summary;

  const run = meta === undefined ? 'Run' : `Run ${meta.runId} (agent-state-machine ${meta.version})`;
  out.push(file === undefined ? run : `${run} — ${file}`);
  if (summary.status === 'empty') {
    // A file that opened a run (its meta line) and holds no move was cut off before its first move.
    out.push(
      summary.meta === undefined
        ? 'No transitions recorded.'
        : 'No transitions recorded: the run ended without a terminal move (interrupted?).',
    );
    return out.join('\n');
  }
  const started =
    summary.startedAt === null ? '' : `started ${format(summary.startedAt, 'yyyy-MM-dd HH:mm:ss.SSS xxx')}, `;
  out.push(
    `${started}${plural(summary.records, 'move')} in ${plural(summary.turns.count, 'turn')} over ${formatDuration(summary.elapsedMs)}`,
  );
  out.push('');

  const open = summary.turns.list.at(-1)?.end === 'open' ? summary.turns.list.at(-1) : undefined;
  const waiting = summary.waiting;
  if (waiting !== undefined && open !== undefined) {
    out.push(
      `WAITING in ${waiting.state} since ${time(waiting.at)} (seq ${waiting.seq}, turn ${open.turn}): ${plural(waiting.requests.length, 'approval request')}`,
    );
    for (const r of waiting.requests) out.push(`  - ${cut(safeStringify(r), 300)}`);
    out.push(
      '  Answer with approve(callId) / deny(callId, reason); resumeAwaitingApproval picks the run up in another process.',
    );
    out.push('');
  } else if (summary.status === 'incomplete' && open !== undefined) {
    const last = summary.lastMoves.at(-1);
    out.push(
      `INCOMPLETE, ended without a terminal move (interrupted?): the history ends inside turn ${open.turn}, in ${summary.finalState ?? '?'} since ${last === undefined ? '?' : time(last.at)} (seq ${summary.lastSeq ?? '?'}).`,
    );
    out.push('  The run was killed, crashed, or is still going. Its last moves:');
    out.push(indent(moves(summary.lastMoves, timeFormat)));
    out.push('');
  }
  pushFailure(out, summary, time, timeFormat);
  if (summary.status === 'ok') {
    const lastTurn = summary.turns.list.at(-1);
    out.push(
      lastTurn === undefined
        ? 'OK: no turn was run.'
        : `OK: the last turn (${lastTurn.turn}) ended in ${lastTurn.outcome ?? lastTurn.end}.`,
    );
    out.push('');
  }

  if (summary.stalls !== undefined) {
    out.push(`Stalls: ${summary.stalls.count} (a detector found the agent repeating itself)`);
    for (const n of summary.stalls.list) {
      const what = `${n.detector}${n.policy === undefined ? '' : ` → ${n.policy}`}`;
      out.push(`  seq ${n.seq}  turn ${n.turn}  ${time(n.at)}  ${what}: ${n.reason}`);
      if (n.evidence !== undefined) out.push(`    evidence: ${cut(escapeControl(safeStringify(n.evidence)), 300)}`);
    }
    out.push('');
  }

  pushPath(out, summary, open !== undefined, turnCount);
  pushStates(out, summary);
  out.push(`Forced moves: ${summary.forced.count === 0 ? 'none' : summary.forced.count}`);
  for (const r of summary.forced.list) out.push(`  seq ${r.seq}  ${time(r.at)}  ${r.from} → ${r.to}  ${r.description}`);
  out.push(`Rejected moves: ${summary.rejected.count === 0 ? 'none' : summary.rejected.count}`);
  for (const r of summary.rejected.list) {
    out.push(
      `  after seq ${r.seq}  ${time(r.at)}  ${r.from} → ${r.to}  ${r.description === '' ? '' : `"${r.description}"  `}(allowed: ${r.allowed.join(', ') || 'nothing'})`,
    );
  }
  if (summary.resets > 0) out.push(`Resets: ${summary.resets}`);
  const last = summary.lastMoves.at(-1);
  out.push(
    `Final state: ${summary.finalState ?? '?'}${last === undefined ? '' : ` (since seq ${last.seq}, ${time(last.at)})`}`,
  );
  return out.join('\n');
}

/** `formatHistory`'s table; it cuts each move's data to one short line, so a 2 KB payload cannot bury the moves. */
function moves(records: readonly TransitionRecord<string>[], timeFormat: string): string {
  return formatHistory(records, { timeFormat, maxDataChars: 120 });
}

function turnOutcome(turn: TurnSummary): string {
  if (turn.end === 'terminal')
    return `${turn.outcome ?? '?'}${turn.standsFor === undefined ? '' : ` (${turn.standsFor})`}`;
  return turn.end === 'open' ? '(unfinished)' : '(reset)';
}

function table(header: string[], rows: string[][], rightAligned: boolean[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]): string =>
    cells
      .map((c, i) => (rightAligned[i] ? c.padStart(widths[i]!) : i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((l) => `  ${l}`)
    .join('\n');
}

// Escaped after they are turned into JSON.
const DATA = new Set(['data', 'evidence']);

function percent(share: number): string {
  if (share === 0) return '0%';
  return share < 0.01 ? '<1%' : `${Math.round(share * 100)}%`;
}

/** The fields formatSummary reads, checked up front so a wrong argument is named, not a TypeError. */
function assertSummary(summary: unknown): void {
  const expected = 'a HistorySummary from summarizeHistory()';
  if (typeof summary !== 'object' || summary === null || Array.isArray(summary))
    throw new InvalidArgumentError('summary', expected, summary);
  const s = summary as Record<string, unknown>;
  const turns = s.turns as Record<string, unknown> | null | undefined;
  const ok =
    typeof s.status === 'string' &&
    typeof s.records === 'number' &&
    typeof turns === 'object' &&
    turns !== null &&
    Array.isArray(turns.list) &&
    Array.isArray(s.states) &&
    Array.isArray(s.lastMoves) &&
    hasList(s.forced) &&
    hasList(s.rejected);
  if (!ok) throw new InvalidArgumentError('summary', expected, summary);
}

function hasList(value: unknown): boolean {
  return typeof value === 'object' && value !== null && Array.isArray((value as { list?: unknown }).list);
}

/** The failure, or the last turn's end when the run is cut off: where, why, its data and the moves up to it. */
function pushFailure(out: string[], summary: HistorySummary, time: (at: number) => string, timeFormat: string): void {
  const failure = summary.failure;
  if (failure === null) return;
  const lead =
    summary.status === 'failed' ? 'FAILED: the run ended' : `Turn ${failure.turn}, the last to finish, ended`;
  const line = failure.line === undefined ? '' : `, line ${failure.line}`;
  const standsFor = summary.turns.list.find((t) => t.turn === failure.turn)?.standsFor;
  out.push(
    `${lead} in ${failure.state}${standsFor === undefined ? '' : ` (${standsFor})`} at seq ${failure.seq}${line} (turn ${failure.turn}, ${time(failure.at)}${failure.forced ? ', forced' : ''})`,
  );
  out.push(
    `  where: ${failure.from} → ${failure.state}, after ${formatDuration(failure.durationMs)} in ${failure.from}`,
  );
  out.push(`  why:   ${failure.description === '' ? '(no description)' : failure.description}`);
  if (failure.data !== undefined) out.push(`  data:  ${cut(escapeControl(safeStringify(failure.data)), 500)}`);
  out.push(`  The moves up to it:`);
  out.push(indent(moves(failure.lastMoves, timeFormat)));
  out.push('');
}

/** The path of turns: their outcomes, and a table of the last `turnCount`. */
function pushPath(out: string[], summary: HistorySummary, open: boolean, turnCount: number): void {
  const outcomes = Object.entries(summary.turns.outcomes).map(([state, n]) => `${n} ${state}`);
  if (open) outcomes.push('1 unfinished');
  out.push(`Path: ${plural(summary.turns.count, 'turn')}${outcomes.length > 0 ? ` — ${outcomes.join(', ')}` : ''}`);
  const shown = summary.turns.list.slice(-turnCount);
  const hidden = summary.turns.count - shown.length;
  if (hidden > 0) out.push(`  (${plural(hidden, 'earlier turn')} not shown)`);
  if (shown.length > 0) {
    out.push(
      indent(
        table(
          ['turn', 'seq', 'duration', 'moves', 'outcome', 'last move'],
          shown.map((t) => [
            String(t.turn),
            `${t.firstSeq}–${t.lastSeq}`,
            formatDuration(t.durationMs),
            String(t.moves),
            turnOutcome(t),
            t.description,
          ]),
          [true, false, false, true, false, false],
        ),
      ),
    );
  }
  out.push('');
}

/** Where the time went, state by state. */
function pushStates(out: string[], summary: HistorySummary): void {
  const total = summary.states.reduce((sum, s) => sum + s.totalMs, 0);
  out.push(`Time per state (${formatDuration(total)} in all):`);
  out.push(
    indent(
      table(
        ['state', 'visits', 'total', 'share', 'median', 'max'],
        summary.states.map((s) => [
          s.state,
          String(s.visits),
          formatDuration(s.totalMs),
          percent(s.share),
          `${s.medianExact ? '' : '~'}${formatDuration(s.medianMs)}`,
          formatDuration(s.maxMs),
        ]),
        [false, true, true, true, true, true],
      ),
    ),
  );
  out.push('');
}
