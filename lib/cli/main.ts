import * as fs from 'node:fs';
import * as path from 'node:path';
import { Command, CommanderError } from 'commander';
import { formatSummary } from '../history/formatSummary';
import type { HistoryWarning } from '../history/HistoryEntry';
import type { HistoryEntry, JournalLineRead } from '../history/HistoryEntry';
import { loadHistory, readHistoryInto, type ReadHistoryOptions } from '../history/loadHistory';
import { HistorySummarizer } from '../history/summarizeHistory';
import { RunFactsCollector } from '../history/runFacts';
import { historyToGantt, RunDiagram, toMermaid } from '../history/toMermaid';
import { escapeControl } from '../internal/escapeControl';
import { safeJson } from './safeJson';
import { HistoryValidator } from '../history/validateHistory';
import { formatValidation } from './formatValidation';
import { reportPage } from './reportPage';
import { OtlpSpanStream, type HistoryToOtlpOptions } from '../telemetry/OtlpSpanStream';
import { OtlpWriter } from './OtlpWriter';
import { followFile } from './followFile';
import { ConversationFormatter } from '../history/formatConversation';
import { addWatchCommand } from './watchCommand';
import { addRaiseCommand } from './raiseCommand';
import { inspectFolder } from './inspectFolder';
import { formatMoveLine, MOVE_LINE_HEADER } from './formatMoveLine';
import { VERSION } from '../internal/version';
import { formatReplay } from '../replay/formatReplay';
import { replayFile } from '../replay/replayFile';
import { formatStallScan } from '../replay/formatStallScan';
import { parseStallSpecs } from '../replay/parseStallSpecs';
import { scanStalls } from '../replay/scanStalls';
import { oneLine, plural } from '../internal/text';
import { messageOf } from '../internal/messageOf';
import type { RunStore } from '../batch/RunStore';
import { addStoreCommands, inputOf, runSource, STORE_FLAG, STORE_HELP } from './storeCommands';
import { budgetLimit, positiveInteger } from './cliArguments';
import { addReadingOptions, loadOptions, type ReadingOptions, type StoreReading } from './readingOptions';

/** Where the CLI writes; tests pass their own to capture it. */
export interface CliIO {
  stdout(text: string): void;
  stderr(text: string): void;
  /** What the file name `-` reads. Default: the process's standard input. */
  stdin?: AsyncIterable<Uint8Array>;
  /**
   * Ends the commands that follow a file until told (`inspect --follow`, `watch`): the
   * executable aborts it on Ctrl-C. Without one they follow until the input ends.
   */
  signal?: AbortSignal;
  /**
   * A promise while standard output is backed up (a slow pipe), else undefined: readers wait
   * for it between chunks, so output never piles up in memory. Default: never backed up.
   */
  drain?: () => Promise<void> | undefined;
  /** Standard output is a terminal (`watch` redraws in place), and its size. */
  isTTY?: boolean;
  columns?: number;
  rows?: number;
}

const processIO: CliIO = {
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
};

/** Exit codes: 0 all good, 1 the history has problems (`validate`), 2 the command could not run. */
export const EXIT = { ok: 0, problems: 1, error: 2 } as const;

/**
 * The `agent-sm` command line, as a function: parses `argv` (without `node` and the script),
 * runs the command and returns the exit code, never throwing and never exiting the process.
 * Every error is one line on stderr, `agent-sm: error: …`, with no stack trace.
 */
export async function main(argv: readonly string[], io: CliIO = processIO): Promise<number> {
  let code: number = EXIT.ok;
  const opened: RunStore[] = [];
  const warn = (w: HistoryWarning): void => io.stderr(`agent-sm: warning: ${escapeControl(w.message)}\n`);
  /** Reads `file` (`-`: standard input) into `take`, entry by entry; returns how many lines it had. */
  const read = async (
    file: string,
    options: ReadingOptions & {
      onWarning?: (w: HistoryWarning) => void;
      withData?: boolean;
      input?: AsyncIterable<Uint8Array>;
    },
    take: (entry: HistoryEntry) => void,
  ): Promise<number> => {
    const readOptions: ReadHistoryOptions = {
      salvage: options.salvage === true,
      onWarning: options.onWarning ?? warn,
      ...(options.maxLineBytes === undefined ? {} : { maxLineBytes: options.maxLineBytes }),
    };
    if (io.drain !== undefined) readOptions.pace = io.drain;
    if (options.input !== undefined) readOptions.input = options.input;
    else if (file === '-') readOptions.input = io.stdin ?? process.stdin;
    return readHistoryInto(file === '-' ? '(standard input)' : file, readOptions, take, {
      withData: options.withData !== false,
    });
  };
  const shown = (file: string): string => escapeControl(file === '-' ? '(standard input)' : file);
  const program = new Command('agent-sm')
    .description(
      'Inspect the JSON Lines history of an agent-state-machine run: what happened, where and why it failed, where the time went.',
    )
    .version(VERSION, '-V, --version')
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout(text),
      writeErr: (text) => io.stderr(text),
      outputError: (text, write) => write(`agent-sm: ${oneLine(text)}\n`),
    });

  program
    .command('inspect')
    .description(
      "Summarize a run: the failure first (where, why, the moves before it), then its turns, time per state, forced and rejected moves. For a batch's folder: its runs, failures first, and its totals.",
    )
    .argument(
      '<path>',
      "history file (.jsonl) written by JsonlHistorySink; - reads standard input; a batch's history folder lists its runs, failures first, and its totals",
    )
    .argument('[runId]', 'a run of the folder: inspect its history file')
    .option(STORE_FLAG, STORE_HELP)
    .option('--json', 'print the summary as JSON')
    .option('--last <n>', 'how many moves to show before the failure or the end', positiveInteger, 10)
    .option('--exit-code', 'exit 1 when the run (of a folder: any run) failed or is incomplete, for scripts')
    .option(
      '--follow',
      'print each move as it is appended (a growing file, or standard input as lines arrive) until the run ends (a move into a terminal state), the input ends or Ctrl-C, then the summary',
    )
    .action(
      async (
        target: string,
        runId: string | undefined,
        opts: ReadingOptions & { store?: string; json?: boolean; last: number; exitCode?: boolean; follow?: boolean },
      ) => {
        if (opts.store !== undefined && opts.follow === true)
          throw new UsageError('--follow follows a file; a run in a store is read as it is now');
        if (opts.store === undefined && runId === undefined && target !== '-' && isFolder(target)) {
          if (opts.follow === true)
            throw new UsageError(
              '--follow follows one run: name it (inspect --follow <folder> <runId>), or use watch <folder>',
            );
          code = await inspectFolder(target, opts, { stdout: io.stdout, stderr: io.stderr, warn }, safeJson);
          return;
        }
        const { file, input } = await runSource(target, runId, opts.store, 'inspect', { opened });
        const summarizer = new HistorySummarizer({ lastMoves: opts.last });
        const warnings: HistoryWarning[] = [];
        const follow = opts.follow === true;
        if (follow && opts.json === true)
          throw new UsageError('--follow prints moves as text; it cannot be combined with --json');
        let take = (entry: HistoryEntry): void => summarizer.add(entry);
        const readOptions: Parameters<typeof read>[1] = { ...opts, onWarning: (w) => (warnings.push(w), warn(w)) };
        if (input !== undefined) readOptions.input = input;
        if (follow) {
          io.stdout(`${MOVE_LINE_HEADER}\n`);
          // The run has ended when its last move ended a turn (a terminal state): a file is followed until then.
          const facts = new RunFactsCollector({ retain: false });
          let ended = false;
          take = (entry) => {
            summarizer.add(entry);
            const turn = facts.add(entry);
            if (turn !== undefined || entry.kind === 'record') ended = turn?.end === 'terminal';
            const text = formatMoveLine(entry);
            if (text !== undefined) io.stdout(`${text}\n`);
          };
          if (file !== '-')
            readOptions.input = followFile(file, {
              signal: io.signal ?? new AbortController().signal,
              done: () => ended,
              onRestart: (why) =>
                io.stderr(`agent-sm: warning: ${shown(file)}: ${why}; reading it again from the start\n`),
            });
        }
        const lines = await read(file, readOptions, take);
        if (lines === 0) io.stderr(`agent-sm: ${shown(file)} is empty: it holds no history lines\n`);
        const summary = summarizer.result();
        const skippedLines = warnings.filter((w) => w.code === 'skipped_line').map((w) => w.line);
        if (opts.json === true)
          io.stdout(
            `${safeJson({ file, warnings, ...(opts.salvage === true ? { skippedLines } : {}), ...summary })}\n`,
          );
        else {
          io.stdout(`${formatSummary(summary, { file: file === '-' ? '(standard input)' : file })}\n`);
          if (skippedLines.length > 0) io.stdout(`Skipped corrupt lines (--salvage): ${skippedLines.join(', ')}\n`);
        }
        if (opts.exitCode === true && (lines === 0 || summary.status !== 'ok')) code = EXIT.problems;
      },
    );

  program
    .command('validate')
    .description(
      'Replay a run against its table (from the file, else the sixteen-state one) and list every problem. Exit 0 when clean, 1 otherwise.',
    )
    .argument(
      '<file>',
      "history file (.jsonl) written by JsonlHistorySink; - reads standard input; or a batch's folder, with a run id",
    )
    .argument('[runId]', 'a run of the folder (with --store: of the batch)')
    .option(STORE_FLAG, STORE_HELP)
    .option('--json', 'print the verdict as JSON')
    .action(async (target: string, runId: string | undefined, opts: StoreReading & { json?: boolean }) => {
      const { file, input } = await runSource(target, runId, opts.store, 'validate', { opened });
      const validator = new HistoryValidator();
      const skippedLines: number[] = [];
      const onWarning = (w: HistoryWarning): void => {
        if (w.code === 'skipped_line') skippedLines.push(w.line);
        warn(w);
      };
      // Replaying a run never looks at a record's data.
      const lines = await read(file, { ...opts, onWarning, withData: false, ...inputOf(input) }, (entry) =>
        validator.add(entry),
      );
      const result = validator.result();
      const name = shown(file);
      // A salvaged file is never clean: lines were lost.
      const ok = result.ok && lines > 0 && skippedLines.length === 0;
      if (opts.json === true)
        io.stdout(
          `${safeJson({ file, ...result, ok, ...(lines === 0 ? { empty: true } : {}), ...(opts.salvage === true ? { skippedLines } : {}) })}\n`,
        );
      else if (lines === 0) io.stdout(`${name}: the file is empty: no history lines to check\n`);
      else io.stdout(formatValidation(name, result, skippedLines));
      code = ok ? EXIT.ok : EXIT.problems;
    });

  program
    .command('diagram')
    .description(
      'Print a Mermaid diagram: the transition table, a run over it with edge counts (--history), or a run as a timeline (--history --gantt).',
    )
    .option('--history <file>', 'draw this run: the edges it took and how often')
    .option('--gantt', 'draw the run as a gantt timeline, one lane per state (needs --history)')
    .action(async (opts: ReadingOptions & { history?: string; gantt?: boolean }) => {
      if (opts.history === undefined) {
        if (opts.gantt === true) throw new UsageError('--gantt needs --history <file>: a timeline is drawn from a run');
        io.stdout(`${toMermaid()}\n`);
        return;
      }
      if (opts.gantt === true) {
        // A timeline has one line per move, so it is built from the whole file.
        const loaded = await loadHistory(opts.history, loadOptions(opts));
        for (const w of loaded.warnings) warn(w);
        io.stdout(`${historyToGantt(loaded.entries)}\n`);
        return;
      }
      // Edge counts only: the file is streamed, never held.
      const diagram = new RunDiagram();
      await read(opts.history, opts, (entry) => diagram.add(entry));
      io.stdout(`${diagram.result()}\n`);
    });

  program
    .command('report')
    .description(
      "Write one self-contained HTML page (no network, opens from file://): for a history file, the run — its failure, timeline, time per state, cost, every move; for a folder, the batch — spend against the caps, outcomes, a sortable table of runs, each run's timeline.",
    )
    .argument('<path>', "a history file (.jsonl), or a folder of them (a batch's historyDir)")
    .argument('[runId]', 'a run of the folder (with --store: of the batch): its page alone')
    .option(
      STORE_FLAG,
      'read from a store (postgres://…): <path> is then a batch id, whose page is made unless a run is named',
    )
    .option(
      '-o, --output <file>',
      'where to write the page (default: <file>.html next to the history file, <folder>/report.html for a folder, <batchId>.html or <runId>.html for a store)',
    )
    .action(async (path_: string, runId: string | undefined, opts: StoreReading & { output?: string }) => {
      const page = await reportPage(path_, runId, opts, { opened });
      const { report, file: target } = page;
      for (const w of report.warnings) io.stderr(`agent-sm: warning: ${escapeControl(w)}\n`);
      const output = opts.output ?? page.output;
      if (target !== undefined && path.resolve(output) === path.resolve(target))
        throw new UsageError(`-o ${output} is the history file itself; choose another path for the page`);
      try {
        fs.writeFileSync(output, report.html);
      } catch (error) {
        throw new Error(`cannot write the report to ${output}: ${messageOf(error)}`, { cause: error });
      }
      io.stdout(`${output}\n`);
    });

  program
    .command('export')
    .description(
      'Convert a run for another tool. otlp: OTLP/JSON spans (a trace per turn, with LLM and tool spans) for a collector, Jaeger or Tempo.',
    )
    .argument('<format>', 'otlp (the only format so far)')
    .argument(
      '<file>',
      "history file (.jsonl) written by JsonlHistorySink; - reads standard input; or a batch's folder, with a run id",
    )
    .argument('[runId]', 'a run of the folder (with --store: of the batch)')
    .option(STORE_FLAG, STORE_HELP)
    .option('-o, --output <path>', 'write to this file instead of stdout')
    .option('--agent-name <name>', 'gen_ai.agent.name of the turn spans')
    .option('--provider <name>', 'gen_ai.provider.name (openai, anthropic, …)')
    .option('--service-name <name>', 'service.name of the resource', 'agent-state-machine')
    .action(
      async (
        format: string,
        target: string,
        runId: string | undefined,
        opts: StoreReading & { output?: string; agentName?: string; provider?: string; serviceName: string },
      ) => {
        if (format !== 'otlp') throw new UsageError(`unknown export format ${JSON.stringify(format)}: expected otlp`);
        const { file, input } = await runSource(target, runId, opts.store, 'export otlp', { opened });
        const options: HistoryToOtlpOptions = {
          serviceName: opts.serviceName,
          ...(opts.agentName === undefined ? {} : { agentName: opts.agentName }),
          ...(opts.provider === undefined ? {} : { providerName: opts.provider }),
          file: file === '-' ? '(standard input)' : file,
          onWarning: (message) => io.stderr(`agent-sm: warning: ${escapeControl(message)}\n`),
        };
        const out = new OtlpWriter(options, opts.output === undefined ? (text) => io.stdout(text) : opts.output);
        try {
          const stream = new OtlpSpanStream(options, (span) => out.span(span));
          await read(file, { ...opts, ...inputOf(input) }, (entry) => stream.add(entry));
          stream.end();
          out.end();
        } catch (error) {
          out.abort();
          throw error;
        }
        if (opts.output !== undefined) io.stderr(`agent-sm: wrote ${plural(out.spans, 'span')} to ${opts.output}\n`);
      },
    );

  addWatchCommand(program, { ...io, opened }, (exit) => (code = exit));

  program
    .command('show')
    .description(
      'Print what was said in a run written with journal: true: the user messages, the model texts, the tool calls with their inputs, the tool results, the errors.',
    )
    .argument(
      '<path>',
      "history file (.jsonl) written with journal: true; - reads standard input; or a batch's history folder, with a run id",
    )
    .argument('[runId]', 'the run of the folder to show')
    .option(STORE_FLAG, STORE_HELP)
    .option('--turn <n>', 'only this turn', positiveInteger)
    .option(
      '--seq <n>',
      'only what move n followed from (the LLM attempts and tool calls just before it)',
      positiveInteger,
    )
    .option('--full', 'show long content whole instead of folded')
    .action(
      async (
        target: string,
        runId: string | undefined,
        opts: ReadingOptions & { store?: string; turn?: number; seq?: number; full?: boolean },
      ) => {
        const { file, input } = await runSource(target, runId, opts.store, 'show', { opened });
        const conversation = new ConversationFormatter({
          ...(opts.turn === undefined ? {} : { turn: opts.turn }),
          ...(opts.seq === undefined ? {} : { seq: opts.seq }),
          ...(opts.full === true ? { foldChars: Infinity, foldLines: Infinity } : {}),
        });
        const print = (lines: string[]): void => {
          if (lines.length > 0) io.stdout(`${lines.join('\n')}\n`);
        };
        // Printed as it is read, nothing kept: a file of any size shows in flat memory. The
        // moves' data is never looked at, so it is not parsed.
        await read(file, { ...opts, withData: false, ...(input === undefined ? {} : { input }) }, (entry) =>
          print(conversation.add(entry)),
        );
        print(conversation.end());
      },
    );

  program
    .command('replay')
    .description(
      'Re-drive a run from its journal (written with journal: true), with no network and no tools, and check that it makes the recorded moves; with --budget, show where other limits would have stopped it.',
    )
    .argument('<path>', "history file (.jsonl) written with journal: true, or a batch's history folder, with a run id")
    .argument('[runId]', 'the run of the folder (with --store: of the batch) to replay')
    .option(STORE_FLAG, STORE_HELP)
    .option(
      '--budget <limit=value...>',
      'replay under these limits, e.g. maxCostUsd=0.10 maxLlmCalls=5',
      budgetLimit,
      {} as Record<string, number>,
    )
    .option('--stall <detector...>', 'show where stall detectors would have fired: k=3, text, idle=8')
    .option('--json', 'print the replay report as JSON')
    .action(async (target: string, runId: string | undefined, opts: ReplayOptions) => {
      // Checked before the file is read, so a bad spec is named first.
      const specs = opts.stall === undefined ? undefined : parseStallSpecs(opts.stall);
      if (specs !== undefined && Object.keys(opts.budget).length > 0)
        throw new UsageError('--stall scans the journal and --budget re-drives the run: give one of them');
      const { file, input } = await runSource(target, runId, opts.store, 'replay', { opened });
      if (specs !== undefined) {
        // The detectors judge the whole journal up to each response, so the journal is kept; the moves are not.
        const journal: JournalLineRead[] = [];
        await read(file, { ...opts, withData: false, ...inputOf(input) }, (e) => {
          if (e.kind === 'journal') journal.push(e.journal);
        });
        const scan = scanStalls(journal, specs);
        io.stdout(opts.json === true ? `${safeJson({ file, ...scan })}\n` : `${formatStallScan(scan, file)}\n`);
        return;
      }
      const budget = Object.keys(opts.budget).length === 0 ? undefined : opts.budget;
      // Read as the replay goes: the peak memory does not grow with the file.
      const report = await replayFile(
        file,
        { ...loadOptions(opts), onWarning: warn, ...inputOf(input) },
        budget === undefined ? {} : { budget },
      );
      io.stdout(opts.json === true ? `${safeJson({ file, ...report })}\n` : `${formatReplay(report, file)}\n`);
      if (budget === undefined && !report.reproduced) code = EXIT.problems;
    });

  // Every command that reads a history file takes the same two reading options.
  for (const command of program.commands) addReadingOptions(command);
  addStoreCommands(program, { stdout: io.stdout, opened, json: safeJson });
  // It reads no history file: added after them.
  addRaiseCommand(program, io);

  try {
    await program.parseAsync([...argv], { from: 'user' });
    return code;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? EXIT.ok : EXIT.error;
    io.stderr(`agent-sm: error: ${escapeControl(oneLine(messageOf(error)))}\n`);
    return EXIT.error;
  } finally {
    // A store's connections would keep the process alive.
    await Promise.all(opened.map((store) => store.close().catch(() => undefined)));
  }
}

/** Whether `target` is a folder (not there, or a file: no). */
function isFolder(target: string): boolean {
  try {
    return fs.statSync(target).isDirectory();
  } catch {
    return false;
  }
}

/** `replay`'s options. */
type ReplayOptions = StoreReading & { budget: Record<string, number>; json?: boolean; stall?: string[] };

/** A wrong combination of options, reported like commander's own usage errors. */
class UsageError extends Error {}
