// The report pages in a real browser (Chromium through playwright-core, found by
// helpers/browser.ts): what a person sees and clicks, that nothing from the history runs, and
// that nothing leaves the page.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Browser } from 'playwright-core';
import { buildHtmlReport } from '../../lib/report/buildHtmlReport';
import { renderBatchPage } from '../../lib/report/renderBatchPage';
import { loadHistory } from '../../lib/history/loadHistory';
import { launchBrowser, openFile, type OpenedPage } from '../helpers/browser';
import { HOSTILE, writeBatch, writeHostileRun } from '../fixtures/reportRuns';
import { writeBatchFolder } from '../fixtures/writeBatchFolder';
import { T0 } from '../fixtures/agentRun';
import type { TransitionRecord } from '../../lib/machine/TransitionRecord';

const SHOTS = path.join(__dirname, '..', '..', 'build', 'screenshots');
jest.setTimeout(60_000);

let browser: Browser;
let dir: string;
const opened: OpenedPage[] = [];

// The folder first: when no browser can be launched, that one clear error is the only one
// (afterAll has a folder to remove and no browser to close).
beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-report-'));
  fs.mkdirSync(SHOTS, { recursive: true });
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true });
});
afterEach(async () => {
  for (const p of opened.splice(0)) await p.close();
});

async function open(html: string, name: string): Promise<OpenedPage> {
  const file = path.join(dir, name);
  fs.writeFileSync(file, html);
  const p = await openFile(browser, file);
  opened.push(p);
  return p;
}

/** Nothing ran, nothing was fetched, nothing complained; the only links are the page's own, to its runs. */
async function expectQuiet(p: OpenedPage): Promise<void> {
  expect(await p.page.evaluate(() => (globalThis as unknown as { __pwned?: unknown }).__pwned)).toBeUndefined();
  expect(await p.page.locator('img, iframe, object, embed, a[href]:not([href^="#run-"])').count()).toBe(0);
  expect(p.requests.filter((u) => u !== p.url)).toEqual([]);
  expect(p.problems).toEqual([]);
}

describe('renderRunPage in the browser', () => {
  let runFile: string;
  let records: TransitionRecord<string>[];
  let page: OpenedPage;

  beforeEach(async () => {
    runFile = writeHostileRun(dir);
    records = [...(await loadHistory(runFile)).records];
    page = await open((await buildHtmlReport(runFile)).html, 'run.html');
  });

  it('.timeline shows every state the run visited, one bar per visit', async () => {
    const states = await page.page.$$eval('#run-view rect.visit', (rects) =>
      rects.map((r) => r.getAttribute('data-state')),
    );
    const visited = new Set(records.flatMap((r) => [r.from, r.to]));
    expect(new Set(states)).toEqual(visited);
    // One bar per move (the visit it ended) plus the final state's.
    expect(states).toHaveLength(records.length + 1);
    expect(await page.page.locator('rect.visit.forced').count()).toBe(1);
    expect(await page.page.locator('rect.visit.retried').count()).toBe(1);
    expect(await page.page.locator('path.mark-rejected').count()).toBe(1);
    await page.page.screenshot({ path: path.join(SHOTS, 'run.png'), fullPage: true });
    await expectQuiet(page);
  });

  it('.failure panel names the failing move, why, and the moves before it', async () => {
    const last = records.at(-1)!;
    const panel = page.page.locator('#failure');
    await expect(panel.textContent()).resolves.toContain(`FAILED: the run ended in Error at seq ${last.seq}`);
    expect(await panel.locator('.where').textContent()).toBe('RunningTool → Error, after 30.0 s in RunningTool');
    expect(await panel.locator('.why').textContent()).toBe('deploy tool crashed');
    expect(await panel.locator('table tbody tr').count()).toBe(10);
    await expectQuiet(page);
  });

  it('clicking a bar or a row shows that move’s description and data', async () => {
    const failing = records.at(-1)!;
    await page.page.click(`#run-view rect.visit[data-seq="${failing.seq}"][data-state="RunningTool"]`);
    const detail = page.page.locator('#move-detail');
    expect(await detail.getAttribute('data-seq')).toBe(String(failing.seq));
    expect(await detail.locator('.desc').textContent()).toBe('deploy tool crashed');
    expect(JSON.parse((await detail.locator('pre.data').textContent())!)).toEqual({
      exitCode: 137,
      message: HOSTILE.img,
    });

    const hostile = records.find((r) => r.description === HOSTILE.link)!;
    await page.page.click(`table.moves tr[data-seq="${hostile.seq}"]`);
    expect(await detail.locator('.desc').textContent()).toBe(HOSTILE.link);
    expect(JSON.parse((await detail.locator('pre.data').textContent())!)).toEqual({
      href: HOSTILE.link,
      html: HOSTILE.script,
    });
    expect(await page.page.locator(`table.moves tr.picked`).getAttribute('data-seq')).toBe(String(hostile.seq));
    await expectQuiet(page);
  });

  it('.moves table filters by state', async () => {
    const rows = page.page.locator('table.moves tbody tr');
    expect(await rows.count()).toBe(records.length + 1); // the rejected move has its row
    await page.page.selectOption('select.state-filter', 'RunningTool');
    const involving = records.filter((r) => r.from === 'RunningTool' || r.to === 'RunningTool');
    expect(await rows.count()).toBe(involving.length);
    expect(await rows.evaluateAll((trs) => trs.map((tr) => Number(tr.getAttribute('data-seq'))))).toEqual(
      involving.map((r) => r.seq),
    );
    await expectQuiet(page);
  });

  it('hostile strings from the history are shown as text and run nothing', async () => {
    const text = (await page.page.textContent('body'))!;
    expect(text).toContain(`Run run ${HOSTILE.script}`);
    expect(text).toContain(HOSTILE.img);
    expect(text).toContain(HOSTILE.link);
    expect(text).toContain(HOSTILE.comment);
    // The rejected move's description, with its line separators, survives the data block.
    await page.page.selectOption('select.state-filter', 'CheckingForCancellation');
    expect(await page.page.locator('table.moves tr.rejected td').nth(4).textContent()).toBe(HOSTILE.separators);
    expect(await page.page.title()).toContain(HOSTILE.script);
    expect(await page.page.locator('script').count()).toBe(2);
    await expectQuiet(page);
  });
});

describe('the page policy', () => {
  it('blocks a script the page does not carry, even if one got in', async () => {
    const html = (await buildHtmlReport(writeHostileRun(dir, 'wall.jsonl'))).html.replace(
      '</body>',
      '<script>window.__pwned = "injected"</script></body>',
    );
    const p = await open(html, 'wall.html');
    expect(await p.page.evaluate(() => (globalThis as unknown as { __pwned?: unknown }).__pwned)).toBeUndefined();
    expect(p.problems.join('\n')).toMatch(/Content Security Policy/);
    // The page's own script still ran: the timeline is there.
    expect(await p.page.locator('rect.visit').count()).toBeGreaterThan(0);
  });
});

describe('renderBatchPage in the browser', () => {
  it('sorts the run table by any column, both ways, and opens a run’s timeline from its row', async () => {
    const batchDir = fs.mkdtempSync(path.join(dir, 'batch-'));
    writeBatch(batchDir, 30);
    writeHostileRun(batchDir, 'zz-hostile.jsonl', HOSTILE.link);
    const report = await buildHtmlReport(batchDir);
    const p = await open(report.html, 'batch.html');
    const ids = (): Promise<string[]> =>
      p.page.$$eval('#runs tbody tr td:first-child', (tds) => tds.map((td) => td.textContent ?? ''));
    const costs = (): Promise<number[]> =>
      p.page.$$eval('#runs tbody tr td:nth-child(3)', (tds) =>
        tds.map((td) => Number((td.textContent ?? '').slice(1))),
      );
    expect(await ids()).toHaveLength(31);

    await p.page.click('button.sort[data-key="cost"]');
    const down = await costs();
    expect(down).toEqual([...down].sort((a, b) => b - a));
    expect(new Set(down).size).toBeGreaterThan(3);
    expect(await p.page.getAttribute('th:has(button[data-key="cost"])', 'aria-sort')).toBe('descending');
    await p.page.click('button.sort[data-key="cost"]');
    const up = await costs();
    expect(up).toEqual([...down].sort((a, b) => a - b));

    await p.page.click('button.sort[data-key="id"]');
    const byId = await ids();
    expect(byId).toEqual([...byId].sort());
    expect(byId[0]).toBe(HOSTILE.link); // 'j' sorts before 't'
    await p.page.screenshot({ path: path.join(SHOTS, 'batch.png'), fullPage: true });

    await p.page.selectOption('#runs-outcome', 'cancelled');
    expect(
      (await p.page.$$eval('#runs tbody tr td:nth-child(2)', (tds) => tds.map((td) => td.textContent))).every(
        (o) => o === 'cancelled',
      ),
    ).toBe(true);
    await p.page.selectOption('#runs-outcome', '');

    // The hostile run's row opens its timeline, inside the same file; its id is only text.
    // A row sets location.hash; the page changes view on the hashchange event that follows,
    // after the click has returned: wait for it.
    await p.page.click(`#runs tbody tr:first-child`);
    await p.page.locator('#batch-view').waitFor({ state: 'hidden' });
    expect(await p.page.locator('#batch-view').isHidden()).toBe(true);
    expect(await p.page.textContent('#run-view .run-title')).toBe(`Run ${HOSTILE.link}`);
    expect(new URL(p.page.url()).hash).toMatch(/^#run-\d+$/);
    const states = await p.page.$$eval(
      '#run-view rect.visit',
      (rects) => new Set(rects.map((r) => r.getAttribute('data-state'))).size,
    );
    expect(states).toBeGreaterThan(5);
    await p.page.click('#run-view rect.visit.forced');
    expect(await p.page.textContent('#move-detail .desc')).toBe('deploy tool crashed');
    await p.page.screenshot({ path: path.join(SHOTS, 'batch-run.png'), fullPage: true });
    await p.page.click('#run-view button.back');
    await p.page.locator('#batch-view').waitFor({ state: 'visible' });
    expect(await p.page.locator('#batch-view').isVisible()).toBe(true);
    await expectQuiet(p);
  });

  it('pages through 10,000 runs and sorts them all', async () => {
    const runs = Array.from({ length: 10_000 }, (_, i) => {
      const t = T0 + i;
      const records: TransitionRecord<string>[] = [
        {
          seq: 1,
          from: 'Ready',
          to: 'WaitingForUserInput',
          description: 'start',
          at: t + 1,
          durationMs: 1,
          forced: false,
        },
        {
          seq: 2,
          from: 'WaitingForUserInput',
          to: 'SendingToLLM',
          description: 'send',
          at: t + 2,
          durationMs: 1,
          forced: false,
        },
        {
          seq: 3,
          from: 'SendingToLLM',
          to: 'ProcessingLLMResponse',
          description: 'LLM responded',
          data: {
            usage: {
              inputTokens: 10,
              outputTokens: 5,
              costUsd: ((i * 7919) % 10_000) / 1e5,
              llmCalls: 1,
              toolCalls: 0,
            },
          },
          at: t + 50,
          durationMs: 48,
          forced: false,
        },
        {
          seq: 4,
          from: 'ProcessingLLMResponse',
          to: 'EndOfTurn',
          description: 'done',
          at: t + 51,
          durationMs: 1,
          forced: false,
        },
      ];
      return { id: `run-${String(i).padStart(5, '0')}`, history: records };
    });
    const p = await open(renderBatchPage(runs), 'big.html');
    expect(await p.page.locator('#runs tbody tr').count()).toBe(100);
    expect(await p.page.textContent('#runs-info')).toBe('runs 1–100 of 10000 (page 1 of 100)');
    await p.page.click('button.sort[data-key="cost"]');
    expect(await p.page.textContent('#runs tbody tr:first-child td:nth-child(3)')).toBe('$0.1000'); // $0.09999, the dearest
    await p.page.click('#runs-next');
    expect(await p.page.textContent('#runs-info')).toBe('runs 101–200 of 10000 (page 2 of 100)');
    await p.page.fill('#runs-search', 'run-0999');
    expect(await p.page.locator('#runs tbody tr').count()).toBe(10);
    await expectQuiet(p);
  });

  it('heads the page with the failures table, the worst first, each opening its run', async () => {
    const batchDir = fs.mkdtempSync(path.join(dir, 'failures-'));
    writeBatch(batchDir, 200);
    writeHostileRun(batchDir, 'zz-hostile.jsonl', HOSTILE.link);
    const p = await open((await buildHtmlReport(batchDir)).html, 'failures.html');
    // The first table on the page, above the dashboard's.
    expect(await p.page.$eval('table', (t) => t.id)).toBe('failures');
    const rows = await p.page.$$eval('#failures tbody tr', (trs) =>
      trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent ?? '')),
    );
    // 50 errors (task-001, task-005, …, then the hostile run), then 50 cancelled: the worst 100 of 101 shown.
    expect(rows).toHaveLength(100);
    expect(await p.page.textContent('#failures-count')).toBe(
      'the worst 100 of 101 shown; the runs table below lists them all (filter it by outcome)',
    );
    expect(rows.slice(0, 51).every((r) => r[1] === 'error')).toBe(true);
    expect(rows.slice(51).every((r) => r[1] === 'cancelled')).toBe(true);
    expect(rows[0]!.slice(0, 3)).toEqual(['task-001', 'error', 'LLM reply malformed']);
    expect(rows[50]!.slice(0, 3)).toEqual(['zz-hostile', 'error', `deploy tool crashed: ${HOSTILE.img}`]);
    // A failure's link opens that run's page, inside the same file.
    await p.page.click('#failures tbody tr:nth-child(51) a');
    await p.page.locator('#batch-view').waitFor({ state: 'hidden' });
    expect(await p.page.textContent('#run-view .run-title')).toBe(`Run ${HOSTILE.link}`);
    await expectQuiet(p);
  });

  it('marks the run a resume went on with, and the crash, where a person looks', async () => {
    const batchDir = writeBatchFolder(fs.mkdtempSync(path.join(dir, 'resumed-')), 40);
    const p = await open((await buildHtmlReport(batchDir)).html, 'resumed.html');
    expect(await p.page.textContent('p.resumed-batch')).toBe(
      'Resumed after a crash: 1 run went on from 1 cut-off attempt set aside beside its file (*.interrupted); what it spent is counted in the figures above, each call once.',
    );
    const marked = await p.page.$$eval('#runs tbody tr td:first-child', (tds) =>
      tds.filter((td) => td.querySelector('.resumed') !== null).map((td) => td.firstChild?.textContent),
    );
    expect(marked).toEqual(['task-003']);
    expect(await p.page.getAttribute('#runs tbody tr td:first-child .resumed', 'title')).toMatch(
      /^resumed after a crash: 1 cut-off attempt set aside, which spent \$0\.0100; restarted from the beginning$/,
    );
    expect(await p.page.locator('#batch-view svg line.mark.crash').count()).toBe(1);
    expect(await p.page.locator('#batch-view svg line.mark.resume').count()).toBe(1);
    await expectQuiet(p);
  });
});
