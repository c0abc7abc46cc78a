import { Command, CommanderError, InvalidArgumentError as CommanderArgumentError } from 'commander';
import { formatSummary } from '../history/formatSummary';
import type { HistoryWarning } from '../history/HistoryEntry';
import { loadHistory, readHistory } from '../history/loadHistory';
import { HistorySummarizer } from '../history/summarizeHistory';
import { historyToGantt, historyToMermaid, toMermaid } from '../history/toMermaid';
import { HistoryValidator } from '../history/validateHistory';
import { historyToOtlp } from '../telemetry/historyToOtlp';
import * as fs from 'node:fs';
import { VERSION } from '../internal/version';
import { oneLine, plural } from '../internal/text';

/** Where the CLI writes; tests pass their own to capture it. */
export interface CliIO {
  stdout(text: string): void;
  stderr(text: string): void;
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
  const warn = (w: HistoryWarning): void => io.stderr(`agent-sm: warning: ${w.message}\n`);
  const program = new Command('agent-sm')
    .description('Inspect the JSON Lines history of an agent-state-machine run: what happened, where and why it failed, where the time went.')
    .version(VERSION, '-V, --version')
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout(text),
      writeErr: (text) => io.stderr(text),
      outputError: (text, write) => write(`agent-sm: ${oneLine(text)}\n`),
    });

  program
    .command('inspect')
    .description('Summarize a run: the failure first (where, why, the moves before it), then its turns, time per state, forced and rejected moves.')
    .argument('<file>', 'history file (.jsonl) written by JsonlHistorySink')
    .option('--json', 'print the summary as JSON')
    .option('--last <n>', 'how many moves to show before the failure or the end', positiveInteger, 10)
    .action(async (file: string, opts: { json?: boolean; last: number }) => {
      const summarizer = new HistorySummarizer({ lastMoves: opts.last });
      const warnings: HistoryWarning[] = [];
      for await (const entry of readHistory(file, { onWarning: (w) => (warnings.push(w), warn(w)) })) summarizer.add(entry);
      const summary = summarizer.result();
      io.stdout(opts.json === true ? `${JSON.stringify({ file, warnings, ...summary }, null, 2)}\n` : `${formatSummary(summary, { file })}\n`);
    });

  program
    .command('validate')
    .description('Replay a run against its table (from the file, else the sixteen-state one) and list every problem. Exit 0 when clean, 1 otherwise.')
    .argument('<file>', 'history file (.jsonl) written by JsonlHistorySink')
    .option('--json', 'print the verdict as JSON')
    .action(async (file: string, opts: { json?: boolean }) => {
      const validator = new HistoryValidator();
      for await (const entry of readHistory(file, { onWarning: warn })) validator.add(entry);
      const result = validator.result();
      if (opts.json === true) io.stdout(`${JSON.stringify({ file, ...result }, null, 2)}\n`);
      else if (result.ok) io.stdout(`${file}: ${plural(result.records, 'record')}, no problems\n`);
      else {
        for (const issue of result.issues) io.stdout(`${file}:${issue.line ?? '?'}: seq ${issue.seq}: ${issue.code}: ${issue.message}\n`);
        io.stdout(`${file}: ${plural(result.issues.length, 'problem')} in ${plural(result.records, 'record')}\n`);
      }
      code = result.ok ? EXIT.ok : EXIT.problems;
    });

  program
    .command('diagram')
    .description('Print a Mermaid diagram: the transition table, a run over it with edge counts (--history), or a run as a timeline (--history --gantt).')
    .option('--history <file>', 'draw this run: the edges it took and how often')
    .option('--gantt', 'draw the run as a gantt timeline, one lane per state (needs --history)')
    .action(async (opts: { history?: string; gantt?: boolean }) => {
      if (opts.history === undefined) {
        if (opts.gantt === true) throw new UsageError('--gantt needs --history <file>: a timeline is drawn from a run');
        io.stdout(`${toMermaid()}\n`);
        return;
      }
      const loaded = await loadHistory(opts.history);
      for (const w of loaded.warnings) warn(w);
      io.stdout(`${opts.gantt === true ? historyToGantt(loaded.entries) : historyToMermaid(loaded.entries)}\n`);
    });

  program
    .command('export')
    .description('Convert a run for another tool. otlp: OTLP/JSON spans (a trace per turn, with LLM and tool spans) for a collector, Jaeger or Tempo.')
    .argument('<format>', 'otlp (the only format so far)')
    .argument('<file>', 'history file (.jsonl) written by JsonlHistorySink')
    .option('-o, --output <path>', 'write to this file instead of stdout')
    .option('--agent-name <name>', 'gen_ai.agent.name of the turn spans')
    .option('--provider <name>', 'gen_ai.provider.name (openai, anthropic, …)')
    .option('--service-name <name>', 'service.name of the resource', 'agent-state-machine')
    .action(async (format: string, file: string, opts: { output?: string; agentName?: string; provider?: string; serviceName: string }) => {
      if (format !== 'otlp') throw new UsageError(`unknown export format ${JSON.stringify(format)}: expected otlp`);
      const loaded = await loadHistory(file);
      for (const w of loaded.warnings) warn(w);
      const otlp = historyToOtlp(loaded.entries, {
        serviceName: opts.serviceName,
        ...(opts.agentName === undefined ? {} : { agentName: opts.agentName }),
        ...(opts.provider === undefined ? {} : { providerName: opts.provider }),
      });
      const text = `${JSON.stringify(otlp, null, 2)}\n`;
      if (opts.output === undefined) io.stdout(text);
      else {
        fs.writeFileSync(opts.output, text);
        const spans = otlp.resourceSpans[0]?.scopeSpans[0]?.spans.length ?? 0;
        io.stderr(`agent-sm: wrote ${plural(spans, 'span')} to ${opts.output}\n`);
      }
    });

  try {
    await program.parseAsync([...argv], { from: 'user' });
    return code;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? EXIT.ok : EXIT.error;
    io.stderr(`agent-sm: error: ${oneLine(error instanceof Error ? error.message : String(error))}\n`);
    return EXIT.error;
  }
}

/** A wrong combination of options, reported like commander's own usage errors. */
class UsageError extends Error {}

function positiveInteger(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n) || n < 1) throw new CommanderArgumentError(`expected a positive integer, got ${JSON.stringify(value)}`);
  return n;
}


