// The batch page (`agent-sm report <folder>`) in Chromium says money apart: the totals line
// (billed, uncertain with why, released) and each run's cost with its uncertain part.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Browser } from 'playwright-core';
import { runBatch } from '../../lib/index';
import { buildHtmlReport } from '../../lib/report/buildHtmlReport';
import { launchBrowser, openFile, type OpenedPage } from '../helpers/browser';
import { threeFiguresTask, THREE_FIGURES } from '../helpers/threeFigures';

let browser: Browser;
let dir: string;
let page: OpenedPage | undefined;
beforeAll(async () => {
  browser = await launchBrowser();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-page-money-'));
  await runBatch([threeFiguresTask('a'), threeFiguresTask('b')], {
    logger: false,
    historyDir: path.join(dir, 'runs'),
    sleep: async () => undefined,
    ...THREE_FIGURES,
  });
}, 60_000);
afterAll(async () => {
  await browser?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});
afterEach(async () => {
  await page?.close();
  page = undefined;
});

const WHY = 'it failed after the request may have left (HTTP 500)';

describe('the batch page says money apart (Chromium)', () => {
  it('totals and per run: billed, uncertain with why, released', async () => {
    const report = await buildHtmlReport(path.join(dir, 'runs'));
    expect(report.kind).toBe('batch');
    const file = path.join(dir, 'batch.html');
    fs.writeFileSync(file, report.html);
    page = await openFile(browser, file);
    await expect(page.page.locator('p.money').textContent()).resolves.toBe(
      `Money: $0.0012 billed, $0.0200 uncertain (2 LLM calls: ${WHY}), $0.0200 released (not billed)`,
    );
    const costs = await page.page.locator('#runs tbody tr td:nth-child(3)').allTextContents();
    expect(costs).toEqual(['$0.0106 ($0.0100 uncertain)', '$0.0106 ($0.0100 uncertain)']);
    await page.page.locator('#runs tbody tr').first().click();
    await expect(page.page.locator('#run-view p.facts').first().textContent()).resolves.toContain(
      'end_of_turn · $0.0006 billed, $0.0100 uncertain, $0.0100 released (not billed) · 3 LLM calls',
    );
    expect(page.problems).toEqual([]);
  });
});
