import type { BudgetLimits } from '../agent/BudgetLimits';
import { addUsageTo, emptyUsage, type UsageTotals } from '../agent/UsageTotals';
import { LIMIT_NAMES, LIMIT_ROWS, limitUsed, USAGE_FIELD_NAMES } from '../internal/fieldLists';
import { LIMITS } from '../internal/limits';
import type { RunReport } from '../batch/runBatch';
import { describeResume } from '../batch/describeResume';
import type { HistoryItem } from '../history/HistoryEntry';
import { formatDuration } from '../internal/formatDuration';
import { plural } from '../internal/text';
import { InvalidArgumentError } from '../machine/InvalidArgumentError';
import { dataField } from '../internal/dataField';
import type { TurnOutcome } from '../internal/turnOutcomes';
import type { RunUsage } from '../history/runFacts';
import type { RunSpend } from '../history/RunSpend';
import { formatSpend, mergeUncertain, type UncertainReasons } from '../internal/formatSpend';
import { collectRun, type StateKind } from './collectRun';
import { encodeRun, type EncodedRun, StringTable } from './encodeRun';
import { esc, page } from './html';
import { waitingCalls, waitingTable, type BatchPageWaitingCall } from './waitingTable';
import { failuresTable, rankFailures, resumedMark, type BatchPageFailure, type ResumedMark } from './failuresTable';
import { legend } from './renderRunPage';
import { barChart, lineChart, thin } from './svgCharts';

/** One run of a batch page: its history, its `RunReport` from `runBatch`, or both. */
export interface BatchPageRun {
  /** Default: the report's id, else the history's run id, else `file`. */
  id?: string;
  /** The run's history (e.g. `loadHistory(file).entries`): its timeline, and its figures when there is no report. */
  history?: Iterable<HistoryItem>;
  /** The run as `runBatch` reported it: outcome, usage and duration are taken from here when given. */
  report?: RunReport;
  /** The history file, named on the page. */
  file?: string;
  /** An earlier, cut-off attempt of this run was kept beside its file (`<file>.interrupted`): a resumed batch ran it again. */
  resumedAttempt?: boolean;
  /**
   * The earlier attempts a resume set aside (`<file>.interrupted`, …), cut off by a crash: what
   * each spent and when its last move was, as far as its file says. Marks the run "resumed" and
   * the crash and the resume on the spend timeline.
   */
  cutOffAttempts?: ReadonlyArray<{ costUsd: number | undefined; endedAt: number | undefined }>;
}

/** Options of `renderBatchPage`: the batch's caps and figures (a `BatchReport` has them), what to call it. */
export interface BatchPageOptions {
  /** Named on the page, e.g. the history folder. */
  source?: string;
  /** The caps the batch ran under. Default: those `runBatch` wrote into the runs' history files, if any. */
  limits?: { perRun?: BudgetLimits; total?: BudgetLimits };
  concurrency?: number;
  /** The batch's elapsed time. Default: from the first run's start to the last run's end. */
  durationMs?: number;
  /** Why the batch stopped early, as `BatchReport.stopped` says (or, for a folder alone, as `readBatchFolder` infers it). */
  stopped?: { message: string };
  /**
   * How each run that did not end well stands, as `readBatchFolder` reads a folder (`cut_off`,
   * reasons from the files); matched to the runs added by `file`, else by `id`. Default: the
   * runs' own outcomes and notes.
   */
  failures?: ReadonlyArray<{
    id: string;
    outcome: string;
    reason: string | undefined;
    costUsd: number;
    file: string | undefined;
  }>;
  /** Characters of each move's data (as JSON) kept in the page. Default 300: 10,000 runs stay a file you can mail. */
  maxDataChars?: number;
}

interface Row {
  run: number;
  id: string;
  outcome: string;
  usage: UsageTotals;
  ms: number;
  final: string;
  note: string;
  /** Why its money is uncertain, as its file says: each reason and its calls. */
  uncertain: UncertainReasons;
  /** Why some of its calls are of unknown cost, as its file says. */
  unpriced: UncertainReasons;
  /** Why it did not end well, when it says: the failures table's reason. */
  reason: string;
  resumed?: ResumedMark;
}

// Typed by the outcomes' one list: an outcome added there fails to compile here until it has a colour.
const TURN_KIND: Readonly<Record<TurnOutcome, StateKind>> = {
  end_of_turn: 'end',
  wrapped_up: 'end',
  budget_exceeded: 'error',
  stalled: 'error',
  error: 'error',
  cancelled: 'error',
};

const OUTCOME_KIND: Readonly<Record<string, StateKind>> = {
  ...TURN_KIND,
  skipped: 'idle',
  pending: 'idle',
  incomplete: 'check',
  empty: 'idle',
  unreadable: 'other',
};

/**
 * Builds a batch page one run at a time, keeping only each run's compact timeline, so ten
 * thousand history files need not be in memory at once. `renderBatchPage` is the one-call form.
 */
export class BatchPageBuilder {
  readonly #strings = new StringTable();
  readonly #runs: EncodedRun[] = [];
  readonly #rows: Row[] = [];
  readonly #spend: Array<[number, number]> = [];
  readonly #order = new Map<string, StateKind>();
  /** When attempts were cut off, and when the runs that went on after them started. */
  readonly #crashes: number[] = [];
  readonly #resumes: number[] = [];
  readonly #maxDataChars: number;
  #limits: BatchPageOptions['limits'] | undefined;
  #concurrency: number | undefined;
  /** Rows by history file and by id, for the failures table's links. */
  readonly #rowByFile = new Map<string, number>();
  readonly #rowById = new Map<string, number>();
  /** Calls the runs wait on for approval (their histories end in AwaitingApproval): the page lists them first. */
  readonly #waiting: BatchPageWaitingCall[] = [];
  #first = Infinity;
  #last = -Infinity;

  constructor(maxDataChars = 300) {
    if (typeof maxDataChars !== 'number' || !Number.isSafeInteger(maxDataChars) || maxDataChars < 1)
      throw new InvalidArgumentError('maxDataChars', 'a positive integer', maxDataChars);
    this.#maxDataChars = maxDataChars;
  }

  /** Adds the next run; `name` labels it in errors (`runs[3]`). */
  add(run: BatchPageRun, name = 'run'): void {
    if (typeof run !== 'object' || run === null)
      throw new InvalidArgumentError(name, 'a run { id?, history?, report?, file? }', run);
    const { history, report, file } = run;
    if (history === undefined && report === undefined)
      throw new InvalidArgumentError(name, 'a run with a `history`, a `report`, or both', run);
    if (
      report !== undefined &&
      (typeof report !== 'object' ||
        report === null ||
        typeof report.outcome !== 'string' ||
        typeof report.usage !== 'object')
    ) {
      throw new InvalidArgumentError(`${name}.report`, 'a RunReport from runBatch()', report);
    }
    const facts = history === undefined ? undefined : collectRun(history);
    let index = -1;
    if (facts !== undefined) {
      this.#limits ??= limitsFrom(facts.meta?.metadata);
      const concurrency = dataField(dataField(facts.meta?.metadata, 'batch'), 'concurrency');
      if (typeof concurrency === 'number' && Number.isSafeInteger(concurrency)) this.#concurrency ??= concurrency;
      for (const state of facts.order)
        if (!this.#order.has(state)) this.#order.set(state, facts.kinds[state] ?? 'other');
      if (facts.records.length > 0) {
        index = this.#runs.length;
        this.#runs.push(encodeRun(facts, this.#strings, this.#maxDataChars));
      }
      const { startedAt, endedAt } = facts.summary;
      if (startedAt !== null) this.#first = Math.min(this.#first, startedAt);
      if (endedAt !== null) this.#last = Math.max(this.#last, endedAt);
      let spent = 0;
      for (const u of facts.usage) {
        if (u.costUsd !== spent) this.#spend.push([u.at, u.costUsd - spent]);
        spent = u.costUsd;
      }
    }
    const id = run.id ?? report?.id ?? facts?.meta?.runId ?? file ?? `run ${this.#rows.length + 1}`;
    if (typeof id !== 'string') throw new InvalidArgumentError(`${name}.id`, 'a string', id);
    this.#index(file, id);
    this.#waiting.push(...waitingCalls(id, index, facts?.summary.waiting));
    const resumed = this.#resumed(run.cutOffAttempts, facts?.summary.startedAt ?? null);
    const reason = report?.error?.message ?? (facts?.summary.failure?.description || '');
    const wentOn =
      report === undefined
        ? resumedFromFile(history, run.resumedAttempt === true || resumed !== undefined)
        : describeResume(report);
    this.#rows.push({
      run: index,
      id,
      outcome: report?.outcome ?? facts?.outcome ?? 'empty',
      usage: runUsage(report?.usage, facts === undefined ? undefined : spentUsage(facts.finalUsage, facts.spend)),
      uncertain: facts?.spend.uncertain ?? [],
      unpriced: facts?.spend.unpriced ?? [],
      ms: report?.durationMs ?? facts?.summary.elapsedMs ?? 0,
      final: facts?.summary.finalState ?? '',
      note: [
        // A crash's mark first, then how the run went on (the mark has said it was resumed).
        resumed === undefined ? '' : resumedMark(resumed),
        resumed === undefined ? wentOn : wentOn.replace(/^resumed: /, ''),
        reason,
      ]
        .filter((n) => n !== '')
        .join('; '),
      reason,
      ...(resumed === undefined ? {} : { resumed }),
    });
  }

  /** A run's cut-off attempts as its mark, noting when they ended and when it went on for the timeline. */
  #resumed(attempts: BatchPageRun['cutOffAttempts'], startedAt: number | null): ResumedMark | undefined {
    if (attempts === undefined || attempts.length === 0) return undefined;
    let costUsd: number | undefined = 0;
    for (const a of attempts) {
      if (a.endedAt !== undefined) this.#crashes.push(a.endedAt);
      costUsd = a.costUsd === undefined || costUsd === undefined ? undefined : costUsd + a.costUsd;
    }
    if (startedAt !== null) this.#resumes.push(startedAt);
    return { attempts: attempts.length, costUsd };
  }

  #index(file: string | undefined, id: string): void {
    if (file !== undefined && !this.#rowByFile.has(file)) this.#rowByFile.set(file, this.#rows.length);
    if (!this.#rowById.has(id)) this.#rowById.set(id, this.#rows.length);
  }

  /** The runs that did not end well, the worst first, each with its row. */
  #failures(given: BatchPageOptions['failures']): BatchPageFailure[] {
    if (given === undefined)
      return rankFailures(
        this.#rows.map((r, row) => ({
          id: r.id,
          outcome: r.outcome,
          reason: r.reason === '' ? undefined : r.reason,
          costUsd: r.usage.costUsd,
          row,
          resumed: r.resumed,
        })),
      );
    return rankFailures(
      given
        .map((f) => ({
          id: f.id,
          outcome: f.outcome,
          reason: f.reason,
          costUsd: f.costUsd,
          row: (f.file === undefined ? undefined : this.#rowByFile.get(f.file)) ?? this.#rowById.get(f.id) ?? -1,
        }))
        .map((f) => ({ ...f, resumed: this.#rows[f.row]?.resumed })),
    );
  }

  /** Runs added so far. */
  get size(): number {
    return this.#rows.length;
  }

  /** A history file that could not be read: listed as `unreadable`, with why, so a broken file cannot hide a run. */
  addUnreadable(file: string, message: string): void {
    this.#index(file, file);
    this.#rows.push({
      run: -1,
      id: file,
      outcome: 'unreadable',
      usage: emptyUsage(),
      uncertain: [],
      unpriced: [],
      ms: 0,
      final: '',
      note: message,
      reason: message,
    });
  }

  /** The page, for the runs added so far. */
  render(options: BatchPageOptions = {}): string {
    if (typeof options !== 'object' || options === null || Array.isArray(options))
      throw new InvalidArgumentError('options', 'an object', options);
    const rows = this.#rows;
    const limits = options.limits ?? this.#limits ?? {};
    const durationMs = options.durationMs ?? (this.#last >= this.#first ? this.#last - this.#first : 0);
    const totals = emptyUsage();
    for (const r of rows) addUsageTo(totals, r.usage);
    const outcomes = new Map<string, number>();
    for (const r of rows) outcomes.set(r.outcome, (outcomes.get(r.outcome) ?? 0) + 1);
    const title = `Batch of ${plural(rows.length, 'run')}`;
    const sub = [
      ...(options.source === undefined ? [] : [options.source]),
      ...(Number.isFinite(this.#first) ? [`started ${new Date(this.#first).toISOString()}`] : []),
      `over ${formatDuration(durationMs)}`,
      ...((options.concurrency ?? this.#concurrency) === undefined
        ? []
        : [`concurrency ${options.concurrency ?? this.#concurrency}`]),
    ];
    const body = [
      `<header><h1>${esc(title)}</h1><p class="sub">${esc(sub.join(' · '))}</p>`,
      options.stopped === undefined
        ? ''
        : `<p class="panel failure stopped"><strong>Stopped because:</strong> ${esc(options.stopped.message)}</p>`,
      resumedLine(rows),
      '</header>',
      '<section id="batch-view">',
      waitingTable(this.#waiting, options.source),
      failuresTable(this.#failures(options.failures), rows.length),
      `<h2>Spend against the caps</h2>${capsTable(totals, durationMs, limits)}`,
      // The cost row counts billed + uncertain, as the caps do: the figures apart, and why money is uncertain.
      `<p class="sub money">${esc(`Money: ${formatSpend({ ...totals, uncertain: mergeUncertain(rows.map((r) => r.uncertain)), unpriced: mergeUncertain(rows.map((r) => r.unpriced)) })}`)}</p>`,
      spendChart(this.#spend, this.#first, durationMs, limits.total?.maxCostUsd, [
        ...this.#crashes.map((at) => ({ x: at - this.#first, label: 'crash: an attempt cut off', cls: 'crash' })),
        ...this.#resumes.map((at) => ({ x: at - this.#first, label: 'resumed', cls: 'resume' })),
      ]),
      `<h2>Outcomes</h2>${barChart(
        [...outcomes]
          .sort((a, b) => b[1] - a[1])
          .map(([o, n]) => ({
            label: o,
            value: n,
            cls: `k-${OUTCOME_KIND[o] ?? 'other'}`,
            note: `${n.toLocaleString('en-US')} (${Math.round((n / Math.max(1, rows.length)) * 100)}%)`,
          })),
        { title: 'Runs by outcome' },
      )}`,
      '<h2>Runs</h2>',
      '<div class="controls">',
      '<label>Find: <input id="runs-search" type="search" placeholder="run id" autocomplete="off"></label>',
      `<label>Outcome: <select id="runs-outcome"><option value="">all</option>${[...outcomes.keys()]
        .sort()
        .map((o) => `<option value="${esc(o)}">${esc(o)}</option>`)
        .join('')}</select></label>`,
      '<button type="button" id="runs-prev">‹ previous</button><button type="button" id="runs-next">next ›</button><span id="runs-info" class="count"></span>',
      '</div>',
      '<p class="hint">Click a column to sort, a row to open that run’s timeline.</p>',
      '<table id="runs"><thead><tr></tr></thead><tbody></tbody></table>',
      '</section>',
      `<section id="run-view" hidden>${legend()}</section>`,
    ].join('\n');
    const data = {
      page: 'batch',
      s: this.#strings.strings,
      order: [...this.#order],
      runs: this.#runs,
      // The run table's columns (clientScript.ts): a chosen few, not one per usage field.
      rows: rows.map((r) => [
        r.run,
        r.id,
        r.outcome,
        r.usage.costUsd,
        r.usage.llmCalls,
        r.usage.toolCalls,
        r.ms,
        r.final,
        r.note,
        r.usage.uncertainUsd,
        r.usage.releasedUsd,
        r.usage.unpricedCalls,
      ]),
    };
    return page(title, body, data);
  }
}

/**
 * One self-contained HTML page for a batch: why it stopped early, the runs that did not end
 * well (the worst first, with why, each linked to its page), then spend against the caps (and
 * over time, against `total.maxCostUsd`), outcome counts, and a sortable, filterable, paged table of runs
 * (outcome, cost, LLM calls, tool calls, duration, final state) in which each row opens that
 * run's timeline and moves inside the same file. Give each run its history, its `RunReport`,
 * or both. Every string is escaped; the page runs nothing but its own script. Pure.
 */
export function renderBatchPage(runs: Iterable<BatchPageRun>, options: BatchPageOptions = {}): string {
  if (
    typeof runs !== 'object' ||
    runs === null ||
    typeof (runs as { [Symbol.iterator]?: unknown })[Symbol.iterator] !== 'function'
  ) {
    throw new InvalidArgumentError('runs', 'an iterable of runs { id?, history?, report?, file? }', runs);
  }
  if (typeof options !== 'object' || options === null || Array.isArray(options))
    throw new InvalidArgumentError('options', 'an object', options);
  const builder = new BatchPageBuilder(options.maxDataChars);
  let i = 0;
  for (const run of runs) builder.add(run, `runs[${i++}]`);
  return builder.render(options);
}

/** The caps `runBatch` writes into each run's meta line (`metadata.batch.limits`), read defensively. */
function limitsFrom(metadata: unknown): BatchPageOptions['limits'] | undefined {
  const limits = dataField(dataField(metadata, 'batch'), 'limits');
  const pick = (value: unknown): BudgetLimits | undefined => {
    if (typeof value !== 'object' || value === null) return undefined;
    const out: Record<string, number> = {};
    for (const key of LIMIT_NAMES) {
      const n = (value as Record<string, unknown>)[key];
      if (typeof n === 'number' && Number.isFinite(n) && n >= 0) out[key] = n;
    }
    return out as BudgetLimits;
  };
  if (typeof limits !== 'object' || limits === null) return undefined;
  const perRun = pick(dataField(limits, 'perRun'));
  const total = pick(dataField(limits, 'total'));
  return { ...(perRun === undefined ? {} : { perRun }), ...(total === undefined ? {} : { total }) };
}

/**
 * What a run's own file tells of a resume: responses its journal marks `fromJournal` were served
 * from the journal of an interrupted attempt, so the run went on after them; with none, a
 * run whose cut-off attempt was kept beside it started again.
 */
function resumedFromFile(history: Iterable<HistoryItem> | undefined, resumedAttempt: boolean): string {
  if (history === undefined) return resumedAttempt ? 'resumed' : '';
  let served = 0;
  for (const item of history) {
    if (typeof item === 'object' && item !== null && (item as { kind?: unknown }).kind === 'journal') {
      const line = (item as { journal: { type?: unknown; fromJournal?: unknown } }).journal;
      if (line.type === 'llm' && line.fromJournal === true) served += 1;
    }
  }
  if (served === 0) return resumedAttempt ? 'resumed: restarted from the beginning' : '';
  return `resumed: recovered from its journal at LLM call ${served + 1} (${plural(served, 'response')} served)`;
}

/** The usage a run's file tells, with its money by the ledger's rule (reservations without a response at their worst case), the figures apart. */
function spentUsage(
  usage: RunUsage | null,
  spend: RunSpend,
): (RunUsage & Pick<UsageTotals, 'uncertainUsd' | 'releasedUsd' | 'unpricedCalls'>) | undefined {
  const { costUsd, uncertainUsd, releasedUsd, unpricedCalls } = spend;
  if (usage === null)
    return costUsd === 0 && releasedUsd === 0 && unpricedCalls === 0
      ? undefined
      : {
          costUsd,
          uncertainUsd,
          releasedUsd,
          unpricedCalls,
          inputTokens: 0,
          outputTokens: 0,
          cachedInputTokens: 0,
          llmCalls: 0,
          toolCalls: 0,
        };
  return { ...usage, costUsd, uncertainUsd, releasedUsd, unpricedCalls };
}

/** A row's usage: each field from the run's report where there is one, else from what its history's records tell, else 0. */
function runUsage(report: UsageTotals | undefined, history: RunUsage | undefined): UsageTotals {
  const usage = emptyUsage();
  for (const key of USAGE_FIELD_NAMES) {
    const value = report?.[key] ?? (history as Partial<Record<string, number>> | undefined)?.[key];
    if (typeof value === 'number') usage[key] = value;
  }
  return usage;
}

function capsTable(totals: UsageTotals, durationMs: number, limits: NonNullable<BatchPageOptions['limits']>): string {
  // The batch cap on wall time is on elapsed time; the runs' own time in turns adds up to more when they overlap.
  const usage: UsageTotals = { ...totals, wallMs: durationMs };
  const body = LIMIT_ROWS.map((key) => {
    const { label, cell: show } = LIMITS[key];
    const used = limitUsed(usage, key);
    const cap = limits.total?.[key];
    const per = limits.perRun?.[key];
    const share = cap === undefined || cap === 0 ? undefined : used / cap;
    const gauge =
      share === undefined
        ? ''
        : `<svg class="gauge" viewBox="0 0 160 12" width="160" height="12" role="img" aria-label="${Math.round(share * 100)}% of the cap"><rect class="cap-room" x="0" y="0" width="160" height="12" rx="2"/><rect class="${share > 1 ? 'cap-over' : 'cap-used'}" x="0" y="0" width="${Math.round(Math.min(1, share) * 160)}" height="12" rx="2"/></svg>`;
    return `<tr><td>${esc(label)}</td><td class="num">${esc(show(used))}</td><td class="num">${cap === undefined ? '—' : esc(`${show(cap)}${share === undefined ? '' : ` (${Math.round(share * 100)}%)`}`)}</td><td>${gauge}</td><td class="num">${per === undefined ? '—' : esc(show(per))}</td></tr>`;
  });
  return `<table class="caps"><thead><tr><th></th><th class="num">used</th><th class="num">batch cap</th><th></th><th class="num">per-run cap</th></tr></thead><tbody>${body.join('')}</tbody></table>`;
}

/** The header's line for a batch resumed after a crash: how many runs went on, and what their cut-off attempts spent. */
function resumedLine(rows: readonly Row[]): string {
  const resumed = rows.filter((r) => r.resumed !== undefined);
  if (resumed.length === 0) return '';
  const attempts = resumed.reduce((n, r) => n + r.resumed!.attempts, 0);
  // A resumed run goes on with what its cut-off attempts spent: their money is in its figures
  // (each answered call once, each call left without an answer at its worst case), not beside them.
  return `<p class="panel incomplete resumed-batch"><strong>Resumed after a crash:</strong> ${esc(`${plural(resumed.length, 'run')} went on from ${plural(attempts, 'cut-off attempt')} set aside beside ${resumed.length === 1 ? 'its file' : 'their files'} (*.interrupted); what ${attempts === 1 ? 'it' : 'they'} spent is counted in the figures above, each call once.`)}</p>`;
}

function spendChart(
  spend: Array<[number, number]>,
  start: number,
  durationMs: number,
  cap: number | undefined,
  marks: ReadonlyArray<{ x: number; label: string; cls: string }>,
): string {
  if (spend.length === 0) return '<h2>Spend over time</h2><p class="hint">The histories carry no usage data.</p>';
  spend.sort((a, b) => a[0] - b[0]);
  let sum = 0;
  const points = spend.map(([at, delta]) => [at - start, Math.round((sum += delta) * 1e10) / 1e10] as const);
  return `<h2>Spend over time</h2>${lineChart([{ name: 'spent (USD)', cls: 's-cost', points: thin(points, 500) }], {
    title: 'Spend over time',
    yFormat: (n) => `$${n.toFixed(n < 1 ? 3 : 2)}`,
    xFormat: (ms) => `+${formatDuration(ms)}`,
    xMax: durationMs,
    marks,
    ...(cap === undefined ? {} : { limit: { value: cap, label: `batch cap $${cap.toFixed(2)}` } }),
  })}`;
}
