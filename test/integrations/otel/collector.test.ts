// The README's setup, end to end: the SDK's real OTLP/HTTP exporter sends live spans, and
// `agent-sm export otlp`'s file is posted as the README's curl does, to a local receiver on
// 127.0.0.1 that speaks OTLP/HTTP with JSON (POST /v1/traces) and, as a collector does,
// rejects a body that is not an ExportTraceServiceRequest with 400.
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { AgentWithStateMachine, createScriptedAgent } from 'agent-state-machine';
import { JsonlHistorySink } from 'agent-state-machine/history';
import { main } from '../../../lib/cli/main';
import type { OtlpSpan, OtlpTraceExport } from '../../../lib/telemetry/OtlpJson';
import { otlpShapeProblems } from '../../helpers/otlpShape';

const ROOT = path.join(__dirname, '..', '..', '..');
const execFileAsync = promisify(execFile);
let server: http.Server;
let url: string;
let received: OtlpSpan[];
let contentTypes: string[];

beforeEach(async () => {
  received = [];
  contentTypes = [];
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      contentTypes.push(req.headers['content-type'] ?? '');
      if (
        req.method !== 'POST' ||
        req.url !== '/v1/traces' ||
        !(req.headers['content-type'] ?? '').startsWith('application/json')
      ) {
        res.writeHead(404).end();
        return;
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(body);
      } catch {
        res
          .writeHead(400, { 'content-type': 'application/json' })
          .end(JSON.stringify({ code: 3, message: 'not JSON' }));
        return;
      }
      const problems = otlpShapeProblems(parsed);
      if (problems.length > 0) {
        res
          .writeHead(400, { 'content-type': 'application/json' })
          .end(JSON.stringify({ code: 3, message: problems.join('; ') }));
        return;
      }
      for (const rs of (parsed as OtlpTraceExport).resourceSpans)
        for (const ss of rs.scopeSpans) received.push(...ss.spans);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`;
});
afterEach(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function names(spans: OtlpSpan[]): string[] {
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  return spans
    .map(
      (s) =>
        `${s.name}${s.parentSpanId === undefined || s.parentSpanId === '' ? '' : ` < ${byId.get(s.parentSpanId)?.name ?? '?'}`}`,
    )
    .sort();
}

const script = () =>
  createScriptedAgent({
    replies: [
      { toolCalls: [{ id: 'c1', name: 'read_file' }], usage: { inputTokens: 9, outputTokens: 2, costUsd: 0.001 } },
      { text: 'done', usage: { inputTokens: 12, outputTokens: 3, costUsd: 0.001 } },
    ],
    tools: { read_file: { output: 'contents' } },
    sleep: async () => undefined,
  });

describe('sending to an OTLP/HTTP receiver', () => {
  it("traceAgent() spans reach a collector through the SDK's OTLP/HTTP exporter, named and linked", async () => {
    const { stdout } = await execFileAsync(
      process.execPath,
      ['--import', 'tsx', path.join(ROOT, 'test/fixtures/otel/sendLive.ts'), url],
      { cwd: ROOT, timeout: 30_000 },
    );
    expect(stdout).toBe('end_of_turn');
    expect(contentTypes.every((t) => t.startsWith('application/json'))).toBe(true);
    expect(names(received)).toEqual([
      'chat < invoke_agent fixer',
      'chat < invoke_agent fixer',
      'execute_tool read_file < invoke_agent fixer',
      'invoke_agent fixer',
    ]);
    const turn = received.find((s) => s.name === 'invoke_agent fixer')!;
    expect(turn.kind).toBe(1);
    expect(received.filter((s) => s.name === 'chat').map((s) => s.kind)).toEqual([3, 3]);
    expect(turn.attributes).toContainEqual({ key: 'gen_ai.provider.name', value: { stringValue: 'openai' } });
  }, 40_000);

  it('agent-sm export otlp writes a file a receiver accepts as the README posts it, with the same spans as live', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-collector-'));
    try {
      const file = path.join(dir, 'run.jsonl');
      const out = path.join(dir, 'spans.json');
      const sink = JsonlHistorySink.open(file, { runId: 'task-17' });
      const agent = new AgentWithStateMachine(script(), { logger: false, sink });
      await agent.runTurn('fix it');
      sink.close();
      let stderr = '';
      expect(
        await main(['export', 'otlp', file, '-o', out, '--agent-name', 'fixer', '--provider', 'openai'], {
          stdout: () => undefined,
          stderr: (t) => void (stderr += t),
        }),
      ).toBe(0);
      expect(stderr).toBe(`agent-sm: wrote 4 spans to ${out}\n`);
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: fs.readFileSync(out),
      });
      expect(response.status).toBe(200);
      expect(names(received)).toEqual([
        'chat < invoke_agent fixer',
        'chat < invoke_agent fixer',
        'execute_tool read_file < invoke_agent fixer',
        'invoke_agent fixer',
      ]);
      // The receiver is strict: a span with a bad id is refused.
      const bad = JSON.parse(fs.readFileSync(out, 'utf8')) as OtlpTraceExport;
      bad.resourceSpans[0]!.scopeSpans[0]!.spans[0]!.traceId = 'xyz';
      expect(
        (
          await fetch(url, {
            method: 'POST',
            headers: { 'Content-Type': 'application/json' },
            body: JSON.stringify(bad),
          })
        ).status,
      ).toBe(400);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
