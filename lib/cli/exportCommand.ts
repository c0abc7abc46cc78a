import type { Command } from 'commander';
import { escapeControl } from '../internal/escapeControl';
import { OtlpSpanStream, type HistoryToOtlpOptions } from '../telemetry/OtlpSpanStream';
import { OtlpWriter } from './OtlpWriter';
import { plural } from '../internal/text';
import { inputOf, runSource, STORE_FLAG, STORE_HELP } from './storeCommands';
import type { StoreReading } from './readingOptions';
import type { CommandContext } from './CommandContext';
import { UsageError } from './UsageError';

/** `agent-sm export otlp <file> [runId]`: a run as OTLP/JSON spans. */
export function addExportCommand(program: Command, ctx: CommandContext): void {
  const { io, opened, read } = ctx;
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
}
