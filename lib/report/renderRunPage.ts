import { formatSpend } from '../internal/formatSpend';
import { PAGE_MOVES_KEPT, RunCollector, type CollectedRun } from './collectRun';
import { encodeRun, stateOrder, StringTable } from './encodeRun';
import { esc, page } from './html';
import { formatSummary } from '../history/formatSummary';
import { isHistoryEntry, type HistoryItem } from '../history/HistoryEntry';
import { ConversationFormatter, MoveConversations } from '../history/formatConversation';
import type { FailureSummary, HistorySummary } from '../history/summarizeHistory';
import { formatDuration } from '../internal/formatDuration';
import { formatUsd } from '../internal/formatUsd';
import { safeStringify } from '../internal/safeStringify';
import { cut, plural } from '../internal/text';
import { InvalidArgumentError } from '../machine/InvalidArgumentError';
import type { TransitionRecord } from '../machine/TransitionRecord';
import { barChart, lineChart, thin } from './svgCharts';
import { stallPanel } from './stallPanel';

/** Options of `renderRunPage`: the file to name, and how much of each move's data to keep. */
export interface RunPageOptions {
  /** The history file, named on the page. */
  file?: string;
  /** Characters of each move's data (as JSON) kept in the page; longer data is cut with `…`. Default 10,000. */
  maxDataChars?: number;
}

/**
 * One self-contained HTML page for one run: its outcome and, when it failed, the failure
 * panel `agent-sm inspect` prints (where, why, the moves before it); a timeline with one bar
 * per state visit (retried, forced and rejected moves marked) whose moves show their
 * description and data on click; time per state; cost and tokens over time when the records
 * carry usage; the full move table, filterable by state. Every string from the history is
 * escaped, and the page's policy runs nothing but its own script. Pure: items in, HTML out.
 */
export function renderRunPage(items: Iterable<HistoryItem>, options: RunPageOptions = {}): string {
  assertItems(items);
  const builder = new RunPageBuilder(options);
  let index = 0;
  for (const item of items) builder.add(item, `items[${index++}]`);
  return builder.render();
}

/** Characters of the conversation section kept in the page. */
const CONVERSATION_CHARS = 200_000;

/**
 * `renderRunPage` an item at a time, for a file streamed (`agent-sm report`): it keeps the
 * moves and the folded text of what was said, capped, never the journal lines themselves.
 */
export class RunPageBuilder {
  readonly #file: string | undefined;
  readonly #maxDataChars: number;
  readonly #run = new RunCollector();
  // What was said before each move, from the journal, capped so the page stays small.
  readonly #said = new MoveConversations();
  readonly #conversation = new ConversationFormatter({ foldChars: 2000, foldLines: 40 });
  /** The conversation section's text so far: kept until it is past the page's cap. */
  readonly #spoken: string[] = [];
  #spokenChars = 0;
  #journal = false;

  constructor(options: RunPageOptions = {}) {
    const { file, maxDataChars } = checkOptions(options);
    this.#file = file;
    this.#maxDataChars = maxDataChars;
  }

  /** Takes the next item; `name` labels it in errors. */
  add(item: HistoryItem, name = 'item'): void {
    this.#run.add(item, name);
    if (!isHistoryEntry(item)) return;
    this.#said.add(item);
    if (item.kind === 'journal') this.#journal = true;
    // Past the cap (by more than the line break the join adds), the rest is cut from the page anyway.
    if (this.#spokenChars > CONVERSATION_CHARS + 1) return;
    const lines = this.#conversation.add(item);
    // Joined with line breaks later: each line counts one more.
    for (const line of lines) this.#spokenChars += line.length + 1;
    this.#spoken.push(...lines);
  }

  /** The page. */
  render(): string {
    const file = this.#file;
    const facts = this.#run.result();
    const said = this.#said.result();
    const { summary } = facts;
    const id = facts.meta?.runId ?? (file === undefined ? 'run' : file);
    const strings = new StringTable();
    const run = {
      ...encodeRun(facts, strings, this.#maxDataChars),
      c: [...said.bySeq].map(([seq, text]) => [seq, strings.id(text)]),
    };
    const body = [
      `<header><h1>Run ${esc(id)} <span class="badge ${esc(facts.outcome)}">${esc(facts.outcome)}</span></h1>`,
      `<p class="sub">${esc(runLine(facts, file))}</p></header>`,
      statusPanel(summary),
      '<section id="run-view">',
      legend(),
      omittedNote(facts, file),
      '</section>',
      timePerState(facts),
      usageCharts(facts),
      this.#journal ? conversationSection(this.#spokenText(), said.truncated, file) : '',
      `<details><summary>As <code>agent-sm inspect</code> prints it</summary><pre>${esc(formatSummary(summary, file === undefined ? {} : { file }))}</pre></details>`,
    ].join('\n');
    return page(`Run ${id} — ${facts.outcome}`, body, {
      page: 'run',
      s: strings.strings,
      order: stateOrder(facts.order, facts.kinds),
      runs: [run],
    });
  }

  #spokenText(): string {
    return [...this.#spoken, ...this.#conversation.end()].join('\n');
  }
}

/** Says which moves the timeline and table leave out, when the run is longer than a page keeps. */
function omittedNote(facts: CollectedRun, file: string | undefined): string {
  if (facts.omittedMoves === 0) return '';
  const first = facts.records[PAGE_MOVES_KEPT - 1]?.seq;
  const last = facts.records[PAGE_MOVES_KEPT]?.seq;
  return `<p class="sub">This run has ${facts.omittedMoves.toLocaleString('en-US')} more moves than a page keeps: the timeline and the table show the first ${PAGE_MOVES_KEPT.toLocaleString('en-US')} (to seq ${String(first)}) and the last ${PAGE_MOVES_KEPT.toLocaleString('en-US')} (from seq ${String(last)}). The summary, time per state and usage cover every move; <code>agent-sm inspect ${esc(file ?? '<file>')}</code> reads them all.</p>`;
}

/** The whole conversation, per turn, folded and cut to the page's cap. */
function conversationSection(text: string, truncated: boolean, file: string | undefined): string {
  const shown =
    text.length > CONVERSATION_CHARS
      ? `${text.slice(0, CONVERSATION_CHARS)}\n… (cut; agent-sm show shows it all)`
      : text;
  const more = truncated
    ? `<p class="sub">The timeline shows what was said for the first moves only; <code>agent-sm show ${esc(file ?? '<file>')}</code> prints it all.</p>`
    : '';
  return `<details id="conversation"><summary>What was said (from the journal)</summary>${more}<pre>${esc(shown)}</pre></details>`;
}

function runLine(facts: CollectedRun, file: string | undefined): string {
  const { summary, meta } = facts;
  const parts: string[] = [];
  if (file !== undefined) parts.push(file);
  if (meta !== undefined) parts.push(`agent-state-machine ${meta.version}`);
  if (summary.startedAt !== null) parts.push(`started ${new Date(summary.startedAt).toISOString()}`);
  parts.push(
    `${plural(summary.records, 'move')} in ${plural(summary.turns.count, 'turn')} over ${formatDuration(summary.elapsedMs)}`,
  );
  if (summary.finalState !== null) parts.push(`final state ${summary.finalState}`);
  return parts.join(' · ');
}

/** The failure (or the cut-off turn) first, as `formatSummary` puts it. */
export function statusPanel(summary: HistorySummary): string {
  const out: string[] = [];
  const open = summary.turns.list.at(-1)?.end === 'open' ? summary.turns.list.at(-1) : undefined;
  if (summary.status === 'empty') out.push('<div class="panel"><strong>No transitions recorded.</strong></div>');
  if (summary.waiting !== undefined && open !== undefined) {
    const w = summary.waiting;
    out.push(
      '<div class="panel incomplete" id="waiting">',
      `<strong>WAITING in ${esc(w.state)} since seq ${w.seq} (turn ${open.turn}): ${plural(w.requests.length, 'approval request')}.</strong>`,
      `<ul>${w.requests.map((r) => `<li><code>${esc(cut(safeStringify(r), 300))}</code></li>`).join('')}</ul>`,
      '</div>',
    );
  } else if (summary.status === 'incomplete' && open !== undefined) {
    const last = summary.lastMoves.at(-1);
    out.push(
      '<div class="panel incomplete" id="incomplete">',
      `<strong>INCOMPLETE: the history ends inside turn ${open.turn}, in ${esc(summary.finalState ?? '?')}${last === undefined ? '' : ` since seq ${last.seq}`}.</strong>`,
      '<p>The run was killed, crashed, or is still going. Its last moves:</p>',
      movesTable(summary.lastMoves),
      '</div>',
    );
  }
  if (summary.failure !== null) out.push(failurePanel(summary, summary.failure));
  if (summary.stalls !== undefined) out.push(stallPanel(summary.stalls));
  if (summary.status === 'ok') {
    const lastTurn = summary.turns.list.at(-1);
    out.push(
      `<div class="panel ok"><strong>${lastTurn === undefined ? 'OK: no turn was run.' : `OK: the last turn (${lastTurn.turn}) ended in ${esc(lastTurn.outcome ?? lastTurn.end)}.`}</strong></div>`,
    );
  }
  const outcomes = Object.entries(summary.turns.outcomes).map(([state, n]) => `${n} ${state}`);
  if (open !== undefined) outcomes.push('1 unfinished');
  const extra = [
    `Path: ${plural(summary.turns.count, 'turn')}${outcomes.length > 0 ? ` — ${outcomes.join(', ')}` : ''}`,
    `forced moves: ${summary.forced.count}`,
    `rejected moves: ${summary.rejected.count}`,
    ...(summary.resets > 0 ? [`resets: ${summary.resets}`] : []),
  ];
  out.push(`<p class="sub">${esc(extra.join(' · '))}</p>`);
  return out.join('\n');
}

function failurePanel(summary: HistorySummary, failure: FailureSummary): string {
  const lead =
    summary.status === 'failed' ? 'FAILED: the run ended' : `Turn ${failure.turn}, the last to finish, ended`;
  const line = failure.line === undefined ? '' : `, line ${failure.line}`;
  return [
    '<div class="panel failure" id="failure">',
    `<strong>${esc(`${lead} in ${failure.state} at seq ${failure.seq}${line} (turn ${failure.turn}, ${new Date(failure.at).toISOString()}${failure.forced ? ', forced' : ''})`)}</strong>`,
    '<dl>',
    `<dt>where</dt><dd class="where">${esc(`${failure.from} → ${failure.state}, after ${formatDuration(failure.durationMs)} in ${failure.from}`)}</dd>`,
    `<dt>why</dt><dd class="why">${esc(failure.description === '' ? '(no description)' : failure.description)}</dd>`,
    failure.data === undefined ? '' : `<dt>data</dt><dd><pre>${esc(cut(safeStringify(failure.data), 4000))}</pre></dd>`,
    '</dl>',
    '<p>The moves up to it:</p>',
    movesTable(failure.lastMoves),
    '</div>',
  ].join('\n');
}

function movesTable(records: readonly TransitionRecord<string>[]): string {
  const rows = records.map(
    (r) =>
      `<tr${r.forced ? ' class="forced"' : ''}><td class="num">${r.seq}</td><td class="num">${esc(new Date(r.at).toISOString().slice(11, 23))}</td><td>${esc(`${r.from} → ${r.to}${r.forced ? ' (forced)' : ''}`)}</td><td class="num">${esc(formatDuration(r.durationMs))}</td><td>${esc(r.description)}</td><td class="data">${r.data === undefined ? '' : esc(cut(safeStringify(r.data), 160))}</td></tr>`,
  );
  return `<table class="last-moves"><thead><tr><th>seq</th><th>time (UTC)</th><th>move</th><th>in from</th><th>description</th><th>data</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

/** The colours of the timeline, said once. */
export function legend(): string {
  const kinds: Array<[string, string]> = [
    ['k-llm', 'LLM calls'],
    ['k-tool', 'tools'],
    ['k-check', 'checks'],
    ['k-idle', 'idle'],
    ['k-end', 'end of turn'],
    ['k-error', 'error states'],
    ['k-wait', 'waiting for a person'],
    ['k-other-0', 'custom states (a colour each)'],
  ];
  const marks: Array<[string, string]> = [
    ['retried', 'LLM call retried'],
    ['forced', 'forced move'],
    ['rejected', 'rejected move (×)'],
  ];
  return `<div class="legend">${[...kinds, ...marks].map(([cls, label]) => `<span><i class="${cls}"></i>${label}</span>`).join('')}</div>`;
}

function timePerState(facts: CollectedRun): string {
  const { states } = facts.summary;
  if (states.length === 0) return '';
  const bars = states.map((s) => ({
    label: s.state,
    value: s.totalMs,
    cls: `k-${facts.kinds[s.state] ?? 'other'}`,
    note: `${formatDuration(s.totalMs)} · ${Math.round(s.share * 100)}% · ${plural(s.visits, 'visit')}`,
  }));
  return `<section id="time-per-state"><h2>Time per state</h2>${barChart(bars, { title: 'Time per state' })}</section>`;
}

/** Spend by the money ledger's rule, when reservations without a response add to what the records say. */
function ledgerNote(facts: CollectedRun): string {
  const { spend } = facts;
  if (spend.openReservations === 0) return '';
  const unpriced = spend.unpricedReservations > 0 ? `, ${spend.unpricedReservations} of them of unknown cost` : '';
  return `<p class="sub">${esc(`Spent by the ledger: ${formatUsd(spend.costUsd)}, counting ${plural(spend.openReservations, 'LLM call')} reserved without a response at ${spend.openReservations === 1 ? 'its' : 'their'} worst case${unpriced}`)}</p>`;
}

function usageCharts(facts: CollectedRun): string {
  const { usage, summary } = facts;
  const t0 = summary.startedAt ?? 0;
  if (usage.length === 0)
    return '<section id="usage"><h2>Cost and tokens over time</h2><p class="hint">The records carry no usage data.</p></section>';
  const xMax = summary.elapsedMs;
  const pts = (pick: (u: (typeof usage)[number]) => number): Array<readonly [number, number]> =>
    thin(
      usage.map((u) => [u.at - t0, pick(u)] as const),
      400,
    );
  const last = usage.at(-1)!;
  const tokenSeries = [
    { name: 'input tokens', cls: 's-in', points: pts((u) => u.inputTokens) },
    { name: 'output tokens', cls: 's-out', points: pts((u) => u.outputTokens) },
    ...(last.cachedInputTokens > 0
      ? [{ name: 'cached input tokens', cls: 's-cached', points: pts((u) => u.cachedInputTokens) }]
      : []),
  ];
  const count = (n: number): string => Math.round(n).toLocaleString('en-US');
  return [
    '<section id="usage"><h2>Cost and tokens over time</h2>',
    `<p class="sub">${esc(`${formatSpend(facts.spend)}, ${count(last.inputTokens)} input and ${count(last.outputTokens)} output tokens, ${plural(last.llmCalls, 'LLM call')}, ${plural(last.toolCalls, 'tool call')}`)}</p>`,
    ledgerNote(facts),
    lineChart([{ name: 'cost (USD)', cls: 's-cost', points: pts((u) => u.costUsd) }], {
      title: 'Cost over time',
      yFormat: (n) => `$${n.toFixed(n < 1 ? 3 : 2)}`,
      xFormat: (ms) => `+${formatDuration(ms)}`,
      xMax,
    }),
    lineChart(tokenSeries, {
      title: 'Tokens over time',
      yFormat: count,
      xFormat: (ms) => `+${formatDuration(ms)}`,
      xMax,
    }),
    '</section>',
  ].join('\n');
}

function assertItems(items: unknown): asserts items is Iterable<HistoryItem> {
  if (
    typeof items !== 'object' ||
    items === null ||
    typeof (items as { [Symbol.iterator]?: unknown })[Symbol.iterator] !== 'function'
  ) {
    throw new InvalidArgumentError(
      'items',
      'an iterable of transition records or history entries (loadHistory(path).entries)',
      items,
    );
  }
}

/** Checks the options both report functions share. */
export function checkOptions(options: unknown): { file: string | undefined; maxDataChars: number } {
  if (typeof options !== 'object' || options === null || Array.isArray(options))
    throw new InvalidArgumentError('options', 'an object', options);
  const { file, maxDataChars = 10_000 } = options as RunPageOptions;
  if (file !== undefined && typeof file !== 'string') throw new InvalidArgumentError('file', 'a string', file);
  if (typeof maxDataChars !== 'number' || !Number.isSafeInteger(maxDataChars) || maxDataChars < 1)
    throw new InvalidArgumentError('maxDataChars', 'a positive integer', maxDataChars);
  return { file, maxDataChars };
}
