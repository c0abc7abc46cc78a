/**
 * `npx tsx test/report/batchPageScreenshots.ts`: writes batch folders of 10 and 10,000 runs
 * (`writeBatchFolder`: failures, a cut-off run, a resume, tasks never started), builds each
 * one's page with `buildHtmlReport`, opens it in the tests' Chromium (test/helpers/browser.ts),
 * prints its size, build time and load time, and saves docs/img/batch-page-<runs>.png.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { buildHtmlReport } from '../../lib/report/buildHtmlReport';
import { writeBatchFolder } from '../fixtures/writeBatchFolder';
import { launchBrowser } from '../helpers/browser';

const OUT = path.join(__dirname, '..', '..', 'docs', 'img');

async function main(): Promise<void> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-batch-page-'));
  const browser = await launchBrowser();
  try {
    for (const count of [10, 10_000]) {
      const dir = writeBatchFolder(fs.mkdtempSync(path.join(tmp, `runs-${count}-`)), count);
      let t = performance.now();
      const { html } = await buildHtmlReport(dir);
      const buildMs = performance.now() - t;
      const file = path.join(tmp, `batch-${count}.html`);
      fs.writeFileSync(file, html);
      const context = await browser.newContext({ viewport: { width: 1200, height: 1000 } });
      const page = await context.newPage();
      const requests: string[] = [];
      page.on('request', (r) => requests.push(r.url()));
      t = performance.now();
      await page.goto(`file://${file}`, { waitUntil: 'load' });
      // The page's script has run once the runs table has its rows.
      await page.waitForSelector('#runs tbody tr');
      const loadMs = performance.now() - t;
      // In the page (this tree's types have no DOM): the navigation's own timings.
      const nav = (await page.evaluate(
        `(() => { const n = performance.getEntriesByType('navigation')[0]; return { domContentLoaded: n.domContentLoadedEventEnd, load: n.loadEventEnd }; })()`,
      )) as { domContentLoaded: number; load: number };
      // Is the page still answering? A click on the next page of runs (when there is one), timed.
      let clickMs: number | undefined;
      if (await page.isEnabled('#runs-next')) {
        t = performance.now();
        await page.click('#runs-next');
        await page.waitForFunction(`document.getElementById('runs-info').textContent.includes('page 2')`);
        clickMs = performance.now() - t;
        await page.click('#runs-prev');
      }
      const shot = path.join(OUT, `batch-page-${count}.png`);
      // The pager's buttons scrolled the page: the picture is of its top, failures first.
      await page.evaluate('window.scrollTo(0, 0)');
      await page.screenshot({ path: shot, fullPage: count <= 10 });
      console.log(
        JSON.stringify({
          runs: count,
          htmlBytes: Buffer.byteLength(html),
          buildMs: Math.round(buildMs),
          loadMs: Math.round(loadMs),
          navigation: { domContentLoadedMs: Math.round(nav.domContentLoaded), loadMs: Math.round(nav.load) },
          nextPageClickMs: clickMs === undefined ? null : Math.round(clickMs),
          failuresShown: await page.locator('#failures tbody tr').count(),
          failuresCount: await page.textContent('#failures-count'),
          otherRequests: requests.filter((u) => u !== `file://${file}`).length,
          screenshot: path.relative(process.cwd(), shot),
          screenshotBytes: fs.statSync(shot).size,
        }),
      );
      await context.close();
    }
  } finally {
    await browser.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
