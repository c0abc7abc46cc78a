import stringWidth from 'string-width';
import { escapeControl } from '../internal/escapeControl';
import { formatDuration } from '../internal/formatDuration';
import { LIMIT_ROWS } from '../internal/fieldLists';
import type { UsageFieldName } from '../internal/usageFields';
import { LIMITS, type LimitName } from '../internal/limits';
import { formatTime } from '../internal/formatTime';
import { formatSpend } from '../internal/formatSpend';
import type { WatchState } from './WatchState';
import type { CapPause } from '../batch/keeping/capPause';
import { formatCapPause } from './formatCapPause';

/** What the board shows beside the state: where, the caps, when, how wide. */
export interface WatchView {
  readonly source: string;
  /** The batch's total caps (`maxCostUsd`, `maxLlmCalls`, …), from its manifest. */
  readonly caps: Readonly<Record<string, unknown>>;
  /** When the batch started (its manifest), for `maxWallMs`. */
  readonly startedAt: number | undefined;
  /** The batch waits at its dollar cap for a raise (its folder's pause file): the board says so, and how to raise it. */
  readonly paused?: CapPause | undefined;
  /** What `agent-sm raise` takes to name the batch; the source when left out. */
  readonly raiseArgs?: readonly string[];
  /** The raises of its paused cap (its raise file), in order: the board shows the latest. */
  readonly raises?: ReadonlyArray<{ readonly at: number; readonly maxCostUsd: number }>;
  /** The batch's cost at each redraw so far, for the spend sparkline. */
  readonly costHistory: readonly number[];
  readonly now: number;
  readonly columns: number;
  /** Rows the terminal has: the board never scrolls (it could not be redrawn in place). */
  readonly rows: number;
}

/** What the board reads of the batch's spend for a cap: the usage fields its limit counts (`LIMITS`), wall time apart. */
type CapSpend = Readonly<
  Record<Exclude<UsageFieldName, 'wallMs' | 'uncertainUsd' | 'releasedUsd' | 'unpricedCalls'>, number>
>;

/**
 * What of the spend cap `name` counts: the usage fields its limit sums (the one list of limits,
 * so every cap a batch can have gets a bar), or for `maxWallMs` the batch's elapsed time.
 */
function capUsed(name: LimitName, spend: CapSpend, wallMs: number): number {
  let used = 0;
  for (const field of LIMITS[name].of) used += field === 'wallMs' ? wallMs : spend[field as keyof CapSpend];
  return used;
}

/** A cap's amount on the board: dollars to four places under $1 (two above), the rest as reports show them. */
function capCell(name: LimitName, n: number): string {
  return name === 'maxCostUsd' ? `$${n.toFixed(n < 1 ? 4 : 2)}` : LIMITS[name].cell(n);
}

/**
 * The live board of `agent-sm watch`, as lines: progress of the batch's tasks, spend against
 * each cap (a bar, and a sparkline of cost over time), the raises of its paused cap, the runs in flight with their state and
 * time in it, and the latest failures with their reason. Each line fits `columns` and the
 * whole fits `rows`, so it can be redrawn in place. Pure.
 */
export function renderWatch(state: WatchState, view: WatchView): string[] {
  const lines: string[] = [];
  const runs = [...state.runs.values()];
  const ids = state.tasks ?? runs.map((r) => r.id);
  const finished = ids.filter((id) => {
    const run = state.runs.get(id);
    return run !== undefined && (run.outcome !== undefined || run.unreadable !== undefined);
  }).length;
  const unended = runs.filter((r) => r.outcome === undefined && r.unreadable === undefined && r.state !== undefined);
  // Once the batch is over, a run that did not end was cut off, and a task with no run was skipped;
  // while it runs, a task with no run is pending (it may yet start).
  const over = state.tasks !== undefined && state.over;
  const inFlight = over ? [] : unended;
  const notStarted = state.tasks === undefined ? 0 : ids.filter((id) => !state.runs.has(id)).length;
  const failed = runs.filter((r) => r.reason !== undefined || r.unreadable !== undefined).length;
  lines.push(
    `agent-sm watch  ${escapeControl(view.source)}  ${formatTime(view.now, 'HH:mm:ss')}${state.ended ? '  (batch ended)' : ''}`,
  );
  lines.push(
    `Progress  ${bar(finished, ids.length, 20)} ${finished}/${ids.length} finished · ${inFlight.length} in flight${state.tasks === undefined ? '' : ` · ${notStarted} ${over ? 'skipped' : 'pending'}`}${over && unended.length > 0 ? ` · ${unended.length} cut off` : ''} · ${failed} failed`,
  );
  const spend = state.spend;
  const wall = view.startedAt === undefined ? 0 : Math.max(0, view.now - view.startedAt);
  let drew = false;
  for (const key of LIMIT_ROWS) {
    const cap = view.caps[key];
    if (typeof cap !== 'number' || !(cap > 0)) continue;
    const n = capUsed(key, spend, wall);
    lines.push(
      `Spend     ${bar(n, cap, 20)} ${LIMITS[key].label} ${capCell(key, n)} of ${capCell(key, cap)} (${Math.round((n / cap) * 100)}%)${key === 'maxCostUsd' ? `  ${sparkline(view.costHistory, 16)}` : ''}`,
    );
    drew = true;
  }
  if (!drew)
    lines.push(
      `Spend     $${spend.costUsd.toFixed(4)} · ${spend.llmCalls} LLM calls · ${spend.toolCalls} tool calls (no caps)  ${sparkline(view.costHistory, 16)}`,
    );
  // The cost above is billed + uncertain, as the cap counts it: the figures apart, and why, as inspect says them.
  if (spend.costUsd > 0 || spend.releasedUsd > 0 || spend.unpricedCalls > 0)
    lines.push(`Money     ${formatSpend(spend)}`);
  // A line per raise of the paused cap, the latest three (the bar above shows the cap in force).
  const raises = view.raises ?? [];
  if (raises.length > 3) lines.push(`Raised    … ${raises.length - 3} earlier`);
  for (const raise of raises.slice(-3))
    lines.push(`Raised    ${formatTime(raise.at, 'HH:mm:ss')}  cap to $${raise.maxCostUsd.toFixed(4)}`);
  if (view.paused !== undefined && !over) {
    // The figures `inspect` says too: the same function, from the same money (`sumRunMoney`).
    const pause = formatCapPause(view.paused, view.raiseArgs ?? [view.source], spend);
    lines.push(pause.paused, `  ${pause.raise}`);
  }
  const fixed = lines.length;
  // What is left of the screen goes to the runs in flight, then the failures.
  const room = Math.max(4, view.rows - fixed - 3);
  const flightRoom = Math.min(inFlight.length, Math.ceil(room / 2));
  lines.push(`In flight (${inFlight.length})`);
  const idWidth = Math.min(24, Math.max(4, ...inFlight.map((r) => r.id.length)));
  inFlight
    .sort((a, b) => (a.since ?? 0) - (b.since ?? 0))
    .slice(0, flightRoom)
    .forEach((r) =>
      lines.push(
        `  ${escapeControl(r.id).slice(0, idWidth).padEnd(idWidth)}  ${escapeControl(r.state ?? '?').padEnd(22)}  for ${formatDuration(Math.max(0, view.now - (r.since ?? view.now)))}`,
      ),
    );
  if (inFlight.length > flightRoom) lines.push(`  … and ${inFlight.length - flightRoom} more`);
  const failures = state.events.filter((e) => e.kind === 'failed' || e.kind === 'unreadable');
  lines.push(`Failures (${failed})`);
  const failRoom = Math.max(1, room - flightRoom - 1);
  for (const e of failures.slice(-failRoom)) lines.push(`  ${formatTime(e.at, 'HH:mm:ss')}  ${escapeControl(e.text)}`);
  return lines.map((line) => fit(line, view.columns));
}

/** `[████░░░░]` for `n` of `max`. */
export function bar(n: number, max: number, width: number): string {
  const share = max > 0 ? Math.min(1, Math.max(0, n / max)) : 0;
  const full = Math.round(share * width);
  return `[${'█'.repeat(full)}${'░'.repeat(width - full)}]`;
}

const SPARKS = '▁▂▃▄▅▆▇█';

/** The last `width` values as a sparkline, scaled to their largest. */
export function sparkline(values: readonly number[], width: number): string {
  const shown = values.slice(-width);
  const top = Math.max(0, ...shown);
  if (shown.length === 0 || top === 0) return '';
  return shown.map((v) => SPARKS[Math.min(7, Math.floor((Math.max(0, v) / top) * 7.999))]).join('');
}

/** A line cut to the terminal's width (by columns, wide characters counted twice). */
function fit(line: string, columns: number): string {
  if (stringWidth(line) <= columns) return line;
  let out = '';
  for (const char of line) {
    if (stringWidth(out + char) > columns - 1) break;
    out += char;
  }
  return `${out}…`;
}
