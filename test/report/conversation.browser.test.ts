// What was said, on the report page, in a real browser: clicking a move shows the journal's
// content for it, as text; nothing in it runs.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Browser } from 'playwright-core';
import { AgentWithStateMachine } from '../../lib/agent/AgentWithStateMachine';
import { createScriptedAgent } from '../../lib/agent/createScriptedAgent';
import { JsonlHistorySink } from '../../lib/history/JsonlHistorySink';
import { loadHistory } from '../../lib/history/loadHistory';
import { buildHtmlReport } from '../../lib/report/buildHtmlReport';
import { launchBrowser, openFile, type OpenedPage } from '../helpers/browser';
import { manualClock } from '../helpers/manualClock';
import { HOSTILE } from '../fixtures/reportRuns';

jest.setTimeout(60_000);
const instant = async (): Promise<void> => undefined;
let browser: Browser;
let dir: string;
const opened: OpenedPage[] = [];

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-said-'));
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true });
});
afterEach(async () => {
  for (const p of opened.splice(0)) await p.close();
});

async function journaledRun(): Promise<string> {
  const file = path.join(dir, 'run.jsonl');
  const sink = JsonlHistorySink.open(file, { runId: 'said' });
  const agent = new AgentWithStateMachine(
    createScriptedAgent({
      sleep: instant,
      replies: [
        {
          toolCalls: [{ id: 'c1', name: 'bash', input: { cmd: HOSTILE.img } }],
          usage: { inputTokens: 1, outputTokens: 1, costUsd: 0.01 },
        },
        { text: `all done ${HOSTILE.script}`, usage: { inputTokens: 1, outputTokens: 1, costUsd: 0.01 } },
      ],
      tools: { bash: { output: `out ${HOSTILE.script}` } },
    }),
    { sink, journal: true, logger: false, clock: manualClock().now, sleep: instant },
  );
  await agent.runTurn('please fix');
  sink.close();
  return file;
}

describe('the report page shows what was said', () => {
  it('clicking a move shows the journal content before it, as text, and the whole conversation is on the page', async () => {
    const file = await journaledRun();
    const report = await buildHtmlReport(file);
    expect(report.html).not.toContain(HOSTILE.script);
    const page = path.join(dir, 'run.html');
    fs.writeFileSync(page, report.html);
    const p = await openFile(browser, page);
    opened.push(p);
    const loaded = await loadHistory(file);
    const tool = loaded.journal.find((j) => j.type === 'tool')!;
    const after = tool.seq + 1;
    await p.page.click(`table.moves tr[data-seq="${after}"]`);
    const said = p.page.locator('#move-detail pre.said');
    expect(await said.textContent()).toContain(`tool bash (c1) ok (before move ${after}):\n    out ${HOSTILE.script}`);
    const first = loaded.journal.find((j) => j.type === 'llm')!;
    await p.page.click(`table.moves tr[data-seq="${first.seq + 1}"]`);
    expect(await said.textContent()).toContain('user (before move');
    expect(await said.textContent()).toContain(`{"cmd":${JSON.stringify(HOSTILE.img)}}`);
    const all = await p.page.locator('#conversation pre').textContent();
    expect(all).toContain('please fix');
    expect(all).toContain(`all done ${HOSTILE.script}`);
    expect(await p.page.evaluate(() => (globalThis as unknown as { __pwned?: unknown }).__pwned)).toBeUndefined();
    expect(await p.page.locator('img, iframe, object, embed, a[href]').count()).toBe(0);
    expect(p.problems).toEqual([]);
  });
});
