// The diff pages (`agent-sm diff … --html FILE`) in Chromium: two runs side by side from the
// divergence on, the divergence marked, each step opening to its line; a batch diff's tables.
// Hostile text from the files stays text, and the page loads nothing and logs no problem
// (its policy allows its two styles alone).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Browser } from 'playwright-core';
import { diffBatches } from '../../lib/batch/reading/diffBatches';
import { folderBatchSource } from '../../lib/batch/reading/BatchSource';
import { readBatchForDiff } from '../../lib/batch/reading/readBatchForDiff';
import { diffRunFiles } from '../../lib/history/diffRunFiles';
import { renderBatchDiffPage, renderRunDiffPage } from '../../lib/report/renderDiffPage';
import { launchBrowser, openFile, type OpenedPage } from '../helpers/browser';
import { runDiffBatch } from '../helpers/diffBatch';

let browser: Browser;
let dir: string;
let page: OpenedPage | undefined;
beforeAll(async () => {
  browser = await launchBrowser();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-diff-page-'));
  await runDiffBatch(path.join(dir, 'base'), 'base');
  await runDiffBatch(path.join(dir, 'response'), 'response');
  await runDiffBatch(path.join(dir, 'modelFails'), 'modelFails');
}, 60_000);
afterAll(async () => {
  await browser?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});
afterEach(async () => {
  await page?.close();
  page = undefined;
});

const open = async (name: string, html: string): Promise<OpenedPage> => {
  const file = path.join(dir, name);
  fs.writeFileSync(file, html);
  page = await openFile(browser, file);
  return page;
};

describe('the run diff page (Chromium)', () => {
  it('shows the runs side by side from the divergence on, the divergence first and marked', async () => {
    const diff = await diffRunFiles(
      { name: path.join(dir, 'base', 'a.jsonl') },
      { name: path.join(dir, 'response', 'a.jsonl') },
    );
    const { page: p, problems, requests, url } = await open('run-diff.html', renderRunDiffPage(diff));
    await expect(p.locator('h1').textContent()).resolves.toBe('Diff differ');
    await expect(p.locator('#verdict strong').first().textContent()).resolves.toBe(
      'First difference at step 13: a different response (the model answered otherwise)',
    );
    const fields = await p.locator('#fields tbody tr td:first-child').allTextContents();
    expect(fields).toEqual(['response.text', 'response.usage.costUsd', 'response.usage.outputTokens', 'costUsd']);
    // The greyed steps alike before it, then the diverging row, then each run's next steps.
    await expect(p.locator('#side tbody tr.before').count()).resolves.toBe(5);
    const diverging = p.locator('#side tbody tr.diverge');
    await expect(diverging.count()).resolves.toBe(1);
    const cells = await diverging.locator('td').allTextContents();
    expect(cells[0]).toBe('16');
    expect(cells[1]).toContain('"fixed"');
    expect(cells[2]).toBe('16');
    expect(cells[3]).toContain('"I could not find it"');
    // A step opens to its line, timestamps left out.
    const details = diverging.locator('td details').nth(1);
    await expect(details.locator('pre').isVisible()).resolves.toBe(false);
    await details.locator('summary').click();
    await expect(details.locator('pre').isVisible()).resolves.toBe(true);
    const line = JSON.parse((await details.locator('pre').textContent())!) as Record<string, unknown>;
    expect(line).toMatchObject({ type: 'llm', response: { text: 'I could not find it' } });
    expect(line).not.toHaveProperty('startedAt');
    const figures = await p.locator('#figures tr').allTextContents();
    expect(figures).toContain('billed$0.0300 → $0.0400 (+$0.0100)');
    expect(problems).toEqual([]);
    expect(requests).toEqual([url]);
  });

  it('marks the line that says why when the same move differs in its details', async () => {
    await runDiffBatch(path.join(dir, 'prompt'), 'prompt');
    const diff = await diffRunFiles(
      { name: path.join(dir, 'base', 'b.jsonl') },
      { name: path.join(dir, 'prompt', 'b.jsonl') },
    );
    const { page: p, problems } = await open('cause-diff.html', renderRunDiffPage(diff));
    await expect(p.locator('#cause-fields tbody td').allTextContents()).resolves.toEqual([
      'input.message',
      '"fix the bug in b"',
      '"fix the bug in b, and add a test"',
    ]);
    const cause = await p.locator('#side tbody tr.cause td').allTextContents();
    expect(cause[0]).toBe('5');
    expect(cause[1]).toContain('"fix the bug in b"');
    expect(cause[3]).toContain('"fix the bug in b, and add a test"');
    // The line column stays narrow: the steps get the room.
    const widths = await p
      .locator('#side thead th')
      .evaluateAll((ths) => ths.map((th) => th.getBoundingClientRect().width));
    expect(widths[0]).toBeLessThan(80);
    expect(widths[1]).toBeGreaterThan(300);
    expect(problems).toEqual([]);
  });

  it('keeps hostile text as text: markup in a step is never markup', async () => {
    const base = fs.readFileSync(path.join(dir, 'base', 'c.jsonl'), 'utf8');
    const hostile = base.replace('nothing to do', '<img src=x onerror=alert(1)><script>alert(2)</script>\u202e');
    const file = path.join(dir, 'hostile.jsonl');
    fs.writeFileSync(file, hostile);
    const diff = await diffRunFiles({ name: path.join(dir, 'base', 'c.jsonl') }, { name: file });
    const { page: p, problems, requests, url } = await open('hostile-diff.html', renderRunDiffPage(diff));
    await expect(p.locator('img').count()).resolves.toBe(0);
    await expect(p.locator('script').count()).resolves.toBe(0);
    await expect(p.locator('#fields').textContent()).resolves.toContain('<img src=x onerror=alert(1)>');
    expect(problems).toEqual([]);
    expect(requests).toEqual([url]);
  });
});

describe('the batch diff page (Chromium)', () => {
  it('lists the regression with both reasons, and the totals', async () => {
    const read = { onWarning: () => undefined };
    const a = await readBatchForDiff((await folderBatchSource(path.join(dir, 'base')))!, read);
    const b = await readBatchForDiff((await folderBatchSource(path.join(dir, 'modelFails')))!, read);
    const diff = diffBatches(a.folder, a.facts, b.folder, b.facts);
    const { page: p, problems } = await open('batch-diff.html', renderBatchDiffPage(diff));
    const row = await p.locator('#regressions tbody tr td').allTextContents();
    expect(row).toEqual([
      'b',
      'end_of_turn → error',
      '$0.0300 → $0.0100 (3 calls of unknown cost) (-$0.0200)',
      '+2',
      '-180',
      'end_of_turn',
      'sendToolResults failed after 3 attempts: HTTP 503: the model is overloaded',
    ]);
    const totals = await p.locator('#totals tr').allTextContents();
    expect(totals).toContain('ended well3 → 2 (-1)');
    expect(problems).toEqual([]);
  });
});
