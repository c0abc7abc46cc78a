import type { Command } from 'commander';
import { InvalidArgumentError as CommanderArgumentError } from 'commander';
import type { RunStore, StoredRun, StoredRunQuery } from '../batch/keeping/RunStore';
import { formatDuration } from '../internal/formatDuration';
import { formatUsd } from '../internal/formatUsd';
import { formatSpend, mergeUncertain } from '../internal/formatSpend';
import { escapeControl } from '../internal/escapeControl';
import { plural } from '../internal/text';
import { TURN_OUTCOMES } from '../internal/turnOutcomes';
import { openStore } from './openStore';
import { runInFolder } from './runInFolder';
import { positiveInteger } from './cliArguments';
import { UsageError } from './UsageError';

/** The outcomes a run of the default table ends with, and `incomplete` for one that never ended. */
const KNOWN_OUTCOMES: readonly string[] = [...TURN_OUTCOMES, 'incomplete'];

/** What the store commands write to, and where they keep the stores to close at the end. */
export interface StoreCommandIO {
  stdout(text: string): void;
  /** Stores opened by a command, closed once it has run (their connections would keep the process alive). */
  opened: RunStore[];
  json(value: unknown): string;
}

/** The option of every command that reads from a store, and its help for one that reads one run. */
export const STORE_FLAG = '--store <url>';
export const STORE_HELP = storeHelp("the run's batch id");

/** `--store`'s help, for a command whose <path> then names `pathIs`. */
export function storeHelp(pathIs: string): string {
  return `read from a store (file:///… or postgres://…): <path> is then ${pathIs}`;
}

/** Opens the store of `--store URL` and keeps it to be closed when the command is done. */
export async function storeFor(url: string, io: Pick<StoreCommandIO, 'opened'>): Promise<RunStore> {
  const store = await openStore(url);
  io.opened.push(store);
  return store;
}

/**
 * The run a reading command names: a history file (`<path>`, or a run of a batch's folder), or
 * with `--store URL` run `runId` of batch `target` in the store, read from it (`input`).
 */
export async function runSource(
  target: string,
  runId: string | undefined,
  storeUrl: string | undefined,
  command: string,
  io: Pick<StoreCommandIO, 'opened'>,
): Promise<{ file: string; input?: AsyncIterable<Uint8Array> }> {
  if (storeUrl === undefined) return { file: await runInFolder(target, runId, command) };
  if (runId === undefined) throw new Error(`--store reads one run: ${command} --store <url> <batchId> <runId>`);
  const store = await storeFor(storeUrl, io);
  return { file: `${store.name} run ${runId} of batch ${target}`, input: store.readRun(target, runId) };
}

/** `{ input }` for a run read from a store, nothing for a file. */
export function inputOf(input: AsyncIterable<Uint8Array> | undefined): { input?: AsyncIterable<Uint8Array> } {
  return input === undefined ? {} : { input };
}

/** Where the page of a store's run (or batch) goes by default: `<id>.html` in the working folder. */
export function storePagePath(id: string, what: 'run' | 'batch' = 'run'): string {
  if (/[/\\]/.test(id) || id.startsWith('.'))
    throw new Error(`${what} ${JSON.stringify(id)} is no file name: give the page's path with -o <file>`);
  return `${id}.html`;
}

/**
 * `agent-sm store migrate URL` (creates the tables) and `agent-sm runs --store URL` (one row a
 * run, across batches: outcome, reason, cost, calls, duration).
 */
export function addStoreCommands(program: Command, io: StoreCommandIO): void {
  const store = program.command('store').description('Manage a store of runs (a folder, or PostgreSQL).');
  store
    .command('migrate')
    .description(
      'Create what the store needs when missing (its tables, or its folder; also made on first use). Idempotent.',
    )
    .argument('<url>', 'file:///path or postgres://user@host:port/database')
    .action(async (url: string) => {
      const opened = await storeFor(url, io);
      await opened.migrate();
      io.stdout(`${opened.name}: ready\n`);
    });
  program
    .command('runs')
    .description('List the runs a store keeps, newest first: outcome, cost, calls, duration and why a run failed.')
    .requiredOption('--store <url>', 'the store: file:///path or postgres://user@host:port/database')
    .option('--batch <id>', "only this batch's runs")
    .option(
      '--outcome <outcomes>',
      `only runs that ended so: one outcome or a comma list of them (${KNOWN_OUTCOMES.join(', ')}, or a custom terminal state's name)`,
      outcomeList,
    )
    .option('--failed', "only runs that ended in an error state (by the isError flags of the run's table)")
    .option('--since <when>', 'only runs started since: a duration back from now (30m, 12h, 1d) or a date', since)
    .option('--limit <n>', 'at most this many rows (default 1000)', positiveInteger)
    .option('--json', 'print the rows as JSON')
    .action(
      async (opts: {
        store: string;
        batch?: string;
        outcome?: string[];
        failed?: boolean;
        since?: number;
        limit?: number;
        json?: boolean;
      }) => {
        const opened = await storeFor(opts.store, io);
        const query: StoredRunQuery = {};
        if (opts.batch !== undefined) query.batchId = opts.batch;
        if (opts.outcome !== undefined) {
          await assertOutcomesKnown(opened, opts.outcome);
          query.outcome = opts.outcome;
        }
        if (opts.failed === true) query.failed = true;
        if (opts.since !== undefined) query.since = opts.since;
        if (opts.limit !== undefined) query.limit = opts.limit;
        const runs = await opened.listRuns(query);
        io.stdout(opts.json === true ? `${io.json(runs)}\n` : formatStoredRuns(runs, opened.name));
      },
    );
}

/** The rows of `agent-sm runs`, with a total line. */
export function formatStoredRuns(runs: readonly StoredRun[], where: string): string {
  if (runs.length === 0) return `No runs in ${where} match.\n`;
  const rows = runs.map((r) => [
    escapeControl(r.batchId),
    escapeControl(r.runId),
    r.outcome,
    // Billed, and the calls no figure holds beside it: a run's $0 is never taken for free.
    r.unpricedCalls > 0
      ? `${formatUsd(billed(r))} (+${plural(r.unpricedCalls, 'call')} of unknown cost)`
      : formatUsd(billed(r)),
    formatUsd(r.uncertainUsd),
    formatUsd(r.releasedUsd),
    String(r.calls),
    formatDuration(r.durationMs),
    new Date(r.startedAt).toISOString(),
    escapeControl(r.reason ?? ''),
  ]);
  // Money apart: billed, uncertain (charged at a hold: the caps count it with billed), released (not billed).
  const header = [
    'BATCH',
    'RUN',
    'OUTCOME',
    'BILLED',
    'UNCERTAIN',
    'RELEASED',
    'CALLS',
    'DURATION',
    'STARTED',
    'REASON',
  ];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]): string =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  const sum = (usd: (r: StoredRun) => number): number =>
    Math.round(runs.reduce((total, r) => total + usd(r), 0) * 1e10) / 1e10;
  const money = formatSpend({
    costUsd: sum((r) => r.costUsd),
    uncertainUsd: sum((r) => r.uncertainUsd),
    releasedUsd: sum((r) => r.releasedUsd),
    uncertain: mergeUncertain(runs.map((r) => r.uncertain)),
    unpricedCalls: runs.reduce((total, r) => total + r.unpricedCalls, 0),
    unpriced: mergeUncertain(runs.map((r) => r.unpriced)),
  });
  const calls = runs.reduce((total, r) => total + r.calls, 0);
  return `${[line(header), ...rows.map(line)].join('\n')}\n${runs.length} ${runs.length === 1 ? 'run' : 'runs'}, ${escapeControl(money)}, ${calls} ${calls === 1 ? 'call' : 'calls'}\n`;
}

/** Of a run's charge, what was billed: priced from usage the provider reported. */
function billed(run: StoredRun): number {
  return Math.max(0, Math.round((run.costUsd - run.uncertainUsd) * 1e10) / 1e10);
}

/** `--outcome`: one outcome or a comma list of them, none empty. */
function outcomeList(value: string): string[] {
  const outcomes = value.split(',').map((o) => o.trim());
  if (outcomes.some((o) => o === ''))
    throw new CommanderArgumentError(
      `expected an outcome or a comma list of them (e.g. error,budget_exceeded), got ${JSON.stringify(value)}`,
    );
  return outcomes;
}

/**
 * Refuses an outcome `--outcome` names that is none of the default table's and that no run in
 * the store ended with (a custom terminal state names itself): a misspelt or made-up outcome
 * would otherwise match nothing and look like an answer.
 */
async function assertOutcomesKnown(store: RunStore, outcomes: readonly string[]): Promise<void> {
  for (const outcome of outcomes) {
    if (KNOWN_OUTCOMES.includes(outcome)) continue;
    if ((await store.listRuns({ outcome, limit: 1 })).length > 0) continue;
    throw new UsageError(
      `unknown outcome ${JSON.stringify(outcome)} for --outcome: expected ${KNOWN_OUTCOMES.join(', ')} ` +
        `(or a custom terminal state some run in ${store.name} ended in); --failed selects every run that ended in an error state`,
    );
  }
}

/** `--since`: `30m`, `12h`, `1d`, `45s` back from now, or a date `Date` reads. */
function since(value: string): number {
  const match = /^(\d+(?:\.\d+)?)(s|m|h|d)$/.exec(value);
  if (match !== null) {
    const unit = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[match[2] as 's' | 'm' | 'h' | 'd'];
    return Date.now() - Number(match[1]) * unit;
  }
  const at = Date.parse(value);
  if (Number.isNaN(at))
    throw new CommanderArgumentError(`expected a duration (30m, 12h, 1d) or a date, got ${JSON.stringify(value)}`);
  return at;
}
