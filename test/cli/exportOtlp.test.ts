import * as fs from 'node:fs';
import * as path from 'node:path';
import type { OtlpTraceExport } from '../../lib/telemetry/OtlpJson';
import { failedRunFolder } from '../helpers/failedRunFolder';
import { runCli } from '../helpers/runCli';
import { otlpShapeProblems } from '../helpers/otlpShape';
import { loadHistory } from '../../lib/history/loadHistory';
import { historyToOtlp } from '../../lib/telemetry/historyToOtlp';
import { main } from '../../lib/cli/main';

const folder = failedRunFolder('agent-sm-otlp-');

const cli = runCli;

describe('agent-sm export otlp', () => {
  it('export otlp prints OTLP/JSON spans of every turn of a history file', async () => {
    const { code, stdout } = await cli(
      'export',
      'otlp',
      folder.runFile,
      '--agent-name',
      'fixer',
      '--provider',
      'anthropic',
    );
    expect(code).toBe(0);
    const otlp = JSON.parse(stdout) as OtlpTraceExport;
    expect(otlpShapeProblems(otlp)).toEqual([]);
    const spans = otlp.resourceSpans[0]!.scopeSpans[0]!.spans;
    // Streamed: each span as it ends, so a turn's calls come before the turn itself.
    expect(spans.map((s) => s.name)).toEqual(['chat', 'chat', 'invoke_agent fixer', 'chat', 'invoke_agent fixer']);
    // The same spans as the library's historyToOtlp, which lists them as they started.
    const byId = (list: typeof spans) => [...list].sort((a, b) => a.spanId.localeCompare(b.spanId));
    const inMemory = historyToOtlp((await loadHistory(folder.runFile)).entries, {
      agentName: 'fixer',
      providerName: 'anthropic',
    });
    expect(byId(spans)).toEqual(byId(inMemory.resourceSpans[0]!.scopeSpans[0]!.spans));
    expect(spans.filter((s) => s.status.code === 2).map((s) => s.name)).toEqual(['chat', 'invoke_agent fixer']);
    expect(otlp.resourceSpans[0]!.resource.attributes).toEqual([
      { key: 'service.name', value: { stringValue: 'agent-state-machine' } },
    ]);
  });

  it('export otlp -o writes the file and says how many spans', async () => {
    const out = path.join(folder.dir, 'spans.json');
    const { code, stdout, stderr } = await cli('export', 'otlp', folder.runFile, '-o', out, '--service-name', 'agents');
    expect(code).toBe(0);
    expect(stdout).toBe('');
    expect(stderr).toBe(`agent-sm: wrote 5 spans to ${out}\n`);
    const otlp = JSON.parse(fs.readFileSync(out, 'utf8')) as OtlpTraceExport;
    expect(otlp.resourceSpans[0]!.resource.attributes[0]!.value).toEqual({ stringValue: 'agents' });
  });

  it('export rejects an unknown format and a missing file with one line and exit 2', async () => {
    const bad = await cli('export', 'zipkin', folder.runFile);
    expect(bad).toMatchObject({ code: 2, stdout: '' });
    expect(bad.stderr).toMatch(/^agent-sm: error: unknown export format "zipkin": expected otlp\n$/);
    const missing = await cli('export', 'otlp', path.join(folder.dir, 'nope.jsonl'));
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^agent-sm: error: .*nope\.jsonl/);
  });

  const T = 1_700_000_000_000;
  const line = (o: object): string => `${JSON.stringify(o)}\n`;
  const move = (seq: number, from: string, to: string, at: number, durationMs = 1, data?: unknown): string =>
    line({
      seq,
      from,
      to,
      description: `${from} to ${to}`,
      at,
      durationMs,
      forced: false,
      ...(data === undefined ? {} : { data }),
    });
  /** A turn that runs `results` tools: Ready → WaitingForUserInput → … → RunningTool → SendingToolResults. */
  const toolRun = (results: unknown[], at = T + 10, durationMs = 5): string =>
    move(1, 'Ready', 'WaitingForUserInput', T) +
    move(2, 'WaitingForUserInput', 'RunningTool', T + 1) +
    move(3, 'RunningTool', 'SendingToolResults', at, durationMs, { results });
  const write = (name: string, text: string): string => {
    const file = path.join(folder.dir, name);
    fs.writeFileSync(file, text);
    return file;
  };

  it('a time that cannot be real stops the export with exit 2, naming the line; no half-written file is left', async () => {
    const file = write(
      'absurd.jsonl',
      move(1, 'Ready', 'WaitingForUserInput', T) + move(2, 'WaitingForUserInput', 'SendingToLLM', 1e300),
    );
    const out = path.join(folder.dir, 'absurd.json');
    const r = await cli('export', 'otlp', file, '-o', out);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      `agent-sm: error: ${file}:2: at 1e+300 is not a real time: expected epoch milliseconds from 0 to 18446744073709 (OTLP's nanosecond timestamps end in 2554)\n`,
    );
    expect(fs.existsSync(out)).toBe(false);
    const negative = await cli('export', 'otlp', write('neg.jsonl', move(1, 'Ready', 'WaitingForUserInput', -5)));
    expect(negative.code).toBe(2);
    expect(negative.stderr).toMatch(/neg\.jsonl:1: at -5 is not a real time/);
  });

  it('durations and tool times that cannot be real are clamped with a warning naming the line; every timestamp is a valid u64', async () => {
    const file = write(
      'clamp.jsonl',
      toolRun(
        [
          { name: 'a', ms: 1e308 },
          { name: 'b', ms: 3, startedAt: -1e20 },
        ],
        T + 10,
        1e300,
      ),
    );
    const r = await cli('export', 'otlp', file);
    expect(r.code).toBe(0);
    expect(r.stderr.split('\n').filter(Boolean)).toEqual([
      `agent-sm: warning: ${file}:3: durationMs 1e+300 cannot be real (the move would have entered its state before 1970); clamped to 1700000000010`,
      `agent-sm: warning: ${file}:3: results[0].ms 1e+308 would end the tool after 2554; clamped`,
      `agent-sm: warning: ${file}:3: results[1].startedAt -100000000000000000000 is not a real time; ignored`,
    ]);
    const otlp = JSON.parse(r.stdout) as OtlpTraceExport;
    expect(otlpShapeProblems(otlp)).toEqual([]);
    const tools = otlp.resourceSpans[0]!.scopeSpans[0]!.spans.filter((s) => s.name.startsWith('execute_tool'));
    // Run at once (their times add up to more than RunningTool lasted): each starts on entry, clamped to 0.
    expect(tools.map((s) => [s.startTimeUnixNano, s.endTimeUnixNano])).toEqual([
      ['0', '18446744073709000000'],
      ['0', '3000000'],
    ]);
  });

  it('streams: 20,000 tool results in one line come out as one span per line, from a file or standard input', async () => {
    const results = Array.from({ length: 20_000 }, () => ({}));
    const file = write('many.jsonl', toolRun(results));
    const out = path.join(folder.dir, 'many.json');
    const r = await cli('export', 'otlp', file, '-o', out);
    expect(r).toMatchObject({ code: 0, stderr: `agent-sm: wrote 20,001 spans to ${out}\n` });
    const text = fs.readFileSync(out, 'utf8');
    expect(text.split('\n')).toHaveLength(20_001 + 3);
    const otlp = JSON.parse(text) as OtlpTraceExport;
    const spans = otlp.resourceSpans[0]!.scopeSpans[0]!.spans;
    expect(spans.at(-1)!.name).toBe('invoke_agent');
    expect(
      otlpShapeProblems({
        resourceSpans: [
          {
            ...otlp.resourceSpans[0]!,
            scopeSpans: [{ ...otlp.resourceSpans[0]!.scopeSpans[0]!, spans: spans.slice(-3) }],
          },
        ],
      }),
    ).toEqual([]);
    let stdout = '';
    const code = await main(['export', 'otlp', '-'], {
      stdout: (t) => void (stdout += t),
      stderr: () => undefined,
      stdin: (async function* () {
        yield Buffer.from(toolRun(results.slice(0, 10)));
      })(),
    });
    expect(code).toBe(0);
    expect((JSON.parse(stdout) as OtlpTraceExport).resourceSpans[0]!.scopeSpans[0]!.spans).toHaveLength(11);
  });

  it('a turn keeps at most 1,024 move events and counts the rest as dropped', async () => {
    let text = move(1, 'Ready', 'WaitingForUserInput', T);
    for (let seq = 2; seq < 3002; seq++)
      text += move(
        seq,
        seq % 2 === 0 ? 'CheckingBudget' : 'CheckingForCancellation',
        seq % 2 === 0 ? 'CheckingForCancellation' : 'CheckingBudget',
        T + seq,
      );
    const r = await cli('export', 'otlp', write('long.jsonl', text));
    const [turn] = (JSON.parse(r.stdout) as OtlpTraceExport).resourceSpans[0]!.scopeSpans[0]!.spans;
    expect(turn!.events).toHaveLength(1024);
    expect(turn!.droppedEventsCount).toBe(3001 - 1024);
  });

  it('every reading command takes --max-line-bytes and --salvage', async () => {
    const file = write(
      'longline.jsonl',
      move(1, 'Ready', 'WaitingForUserInput', T) +
        move(2, 'WaitingForUserInput', 'SendingToLLM', T + 1, 1, 'x'.repeat(5000)),
    );
    for (const args of [
      ['inspect', file],
      ['validate', file],
      ['diagram', '--history', file],
      ['diagram', '--gantt', '--history', file],
      ['report', file, '-o', path.join(folder.dir, 'r.html')],
      ['export', 'otlp', file],
      ['replay', file],
    ]) {
      const refused = await cli(...args, '--max-line-bytes', '1000');
      expect([args[0], refused.code, refused.stderr]).toEqual([
        args[0],
        2,
        expect.stringMatching(/longline\.jsonl:2: line is longer than the limit of 1,000 bytes/),
      ]);
      const salvaged = await cli(...args, '--max-line-bytes', '1000', '--salvage');
      expect([args[0], salvaged.stderr]).toEqual([
        args[0],
        expect.stringMatching(
          /longline\.jsonl:2: skipped a corrupt line: the line is 5,\d+ bytes long, over the limit of 1,000/,
        ),
      ]);
    }
    const bad = await cli('inspect', file, '--max-line-bytes', '0');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--max-line-bytes.*expected a positive integer, got "0"/);
  });
});
