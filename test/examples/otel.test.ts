import { SpanKind } from '@opentelemetry/api';
import { runOtelExample } from '../../examples/otel-span-tree';

describe('examples/otel-span-tree', () => {
  it('runOtelExample() prints the span tree of its demo turn: a retried chat, two tools at once, the final chat', async () => {
    const lines: string[] = [];
    const spans = await runOtelExample((line) => lines.push(line));
    const top = lines
      .filter((l) => /^\s*(invoke_agent|chat|execute_tool)/.test(l))
      .map((l) => l.replace(/\s+\+.*?(ERROR.*)?$/, (_m, e: string | undefined) => (e === undefined ? '' : ` ${e}`)));
    expect(top).toEqual([
      'invoke_agent code-fixer  [INTERNAL]',
      '  chat gpt-4.1  [CLIENT] ERROR: connection reset by peer',
      '  chat gpt-4.1  [CLIENT]',
      '  execute_tool read_file  [INTERNAL]',
      '  execute_tool run_tests  [INTERNAL] ERROR: 1 failed',
      '  chat gpt-4.1  [CLIENT]',
    ]);
    expect(lines).toContain('  execute_tool read_file  [INTERNAL]  +1270 ms, 15 ms');
    expect(lines).toContain('  execute_tool run_tests  [INTERNAL]  +1270 ms, 2400 ms  ERROR: 1 failed');
    expect(spans.filter((s) => s.kind === SpanKind.CLIENT)).toHaveLength(3);
  });
});
