import * as fs from 'node:fs';
import * as path from 'node:path';
import type { OtlpTraceExport } from '../../lib/telemetry/OtlpJson';
import { failedRunFolder } from '../helpers/failedRunFolder';
import { runCli } from '../helpers/runCli';
import { otlpShapeProblems } from '../helpers/otlpShape';

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
    expect(spans.map((s) => s.name)).toEqual(['invoke_agent fixer', 'chat', 'chat', 'invoke_agent fixer', 'chat']);
    expect(spans.filter((s) => s.status.code === 2).map((s) => s.name)).toEqual(['invoke_agent fixer', 'chat']);
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
});
