import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import OpenAI from 'openai';
import { formatBatchReport, runBatch, RunSkippedError, type Pricing } from 'agent-state-machine';
import { fromOpenAIChat } from '../../../lib/integrations/openai';
import { startOpenAIChatServer } from '../../../examples/servers/openaiChatServer';
import { runCli } from '../../helpers/runCli';

// The real OpenAI client against a local server that ignores max_completion_tokens, as some
// compatible servers do: from its fifth request on, every answer is 1,000 output tokens, billed,
// whatever the request allowed (100). A strict cap cannot be kept past such a server: the batch
// stops at the first answer past its bound, and only the runs then in flight can overshoot.

const USD_PER_TOKEN = 5e-6;
const pricing: Pricing = (u) => ((u.inputTokens ?? 0) + (u.outputTokens ?? 0)) * USD_PER_TOKEN;
const MAX = 100;
const IGNORED = 1000;
const CONCURRENCY = 3;
const TASKS = 20;
const CAP = 1;
// What one answer past its bound costs beyond its worst case.
const OVERSHOOT_USD = (IGNORED - MAX) * USD_PER_TOKEN;
const billedInput = (body: unknown): number => Math.ceil(JSON.stringify(body).length / 4);

let dir: string;
beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-bound-exceeded-'))));
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

async function batchAgainstIgnoringServer(strict: boolean) {
  let billedUsd = 0;
  let past = 0;
  const server = await startOpenAIChatServer({
    ignoresMaxTokens: true,
    respond: (body: { max_completion_tokens: number }, index) => {
      const completion = index < 4 ? 50 : IGNORED;
      if (completion > body.max_completion_tokens) past += 1;
      const usage = { prompt_tokens: billedInput(body), completion_tokens: completion };
      billedUsd += (usage.prompt_tokens + usage.completion_tokens) * USD_PER_TOKEN;
      return { content: 'done', usage, model: 'gpt-local' };
    },
  });
  try {
    const client = new OpenAI({ apiKey: 'sk-local', baseURL: server.baseURL });
    const report = await runBatch(
      Array.from({ length: TASKS }, (_, i) => ({
        id: `t${i}`,
        input: 'Say done',
        agent: () => fromOpenAIChat(client, { model: 'gpt-local', maxTokens: MAX }),
      })),
      { logger: false, concurrency: CONCURRENCY, pricing, historyDir: dir, total: { maxCostUsd: CAP, strict } },
    );
    expect(server.rejected).toEqual([]);
    return { report, billedUsd, past, requests: server.exchanges.length };
  } finally {
    await server.close();
  }
}

describe('a server that ignores max tokens, under a strict cap (the default)', () => {
  it('stops the batch at the first answer past its bound: at most one overshoot per run in flight, the fact in the file and the reports', async () => {
    const { report, billedUsd, past, requests } = await batchAgainstIgnoringServer(true);
    // Only the runs in flight when the first answer passed its bound made a request past it.
    expect(past).toBeGreaterThanOrEqual(1);
    expect(past).toBeLessThanOrEqual(CONCURRENCY);
    expect(requests).toBeLessThanOrEqual(4 + CONCURRENCY);
    expect(billedUsd).toBeLessThanOrEqual(CAP + CONCURRENCY * OVERSHOOT_USD);
    expect(report.totals.costUsd).toBeCloseTo(billedUsd, 9);

    const reason =
      /^the response used 1000 output tokens, past its bound of 100 \(900 over, \$0\.00\d\d past its worst case\): the server ignores max tokens; the cap cannot be kept, so the batch stops$/;
    const stopped = report.runs.filter((r) => r.outcome === 'budget_exceeded');
    expect(stopped).toHaveLength(past);
    for (const run of stopped) expect(run.error!.message).toMatch(reason);
    const skipped = report.runs.filter((r) => r.outcome === 'skipped');
    expect(skipped.length).toBeGreaterThanOrEqual(TASKS - 4 - CONCURRENCY);
    for (const run of skipped) {
      expect(run.error).toBeInstanceOf(RunSkippedError);
      expect(run.error).toMatchObject({ reason: 'budget_exceeded' });
      expect(run.error!.message).toMatch(reason);
    }
    expect(report.stopped?.message).toMatch(reason);
    expect(formatBatchReport(report)).toMatch(
      /Stopped early: the response used 1000 output tokens, past its bound of 100 \(900 over/,
    );

    // The fact is in the stopped run's file: its attempt's journal line and the record that ends it.
    const file = fs.readFileSync(stopped[0]!.historyFile!, 'utf8');
    const fact = { outputTokens: IGNORED, maxOutputTokens: MAX, overshootTokens: IGNORED - MAX };
    // Its attempt's journal line and the record that ends the run (its data), each with the overshoot.
    const withFact = file.split('\n').filter((l) => l.includes(`"boundExceeded":${JSON.stringify(fact).slice(0, -1)}`));
    expect(withFact).toHaveLength(2);
    expect(withFact[0]).toContain('"type":"llm"');
    expect(withFact[1]).toContain('"outcome":"budget_exceeded"');

    // agent-sm inspect <folder> says why the run and the batch stopped, and by how much.
    const inspected = await runCli('inspect', dir);
    expect(inspected.stdout).toMatch(/past its bound of 100 \(900 over/);
  });

  it('with strict: false records the fact and goes on: the overshoot it accepted', async () => {
    const { report, past } = await batchAgainstIgnoringServer(false);
    expect(report.runs.every((r) => r.outcome === 'end_of_turn')).toBe(true);
    expect(past).toBe(TASKS - 4);
    const file = fs.readFileSync(report.runs.at(-1)!.historyFile!, 'utf8');
    expect(file).toContain('"boundExceeded":{"outputTokens":1000,"maxOutputTokens":100,"overshootTokens":900');
  });
});
