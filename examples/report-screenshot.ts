/**
 * `npm run example:report-screenshot`: remakes examples/report-run.png, the picture of an
 * HTML report in the README. Runs the batch example (offline, about a second), writes the
 * page of its run stopped by its own budget with `buildHtmlReport`, opens it in Debian's
 * chromium (`apt-get install -y chromium`, or CHROMIUM_PATH) and photographs its top: the
 * failure panel and the timeline.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { chromium } from 'playwright-core';
import { buildHtmlReport } from '../lib/subpaths/report';
import { runBatchExample } from './budget-batch';

const OUT = path.join(__dirname, 'report-run.png');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-screenshot-'));
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  try {
    const report = await runBatchExample({ historyDir: dir, print: () => undefined, tty: false });
    // The big refactor (task 2) is stopped by its own per-run cap after eight expensive rounds.
    const run = report.runs.find((r) => r.outcome === 'budget_exceeded' && r.historyFile !== undefined)!;
    const file = path.join(dir, 'run.html');
    fs.writeFileSync(file, (await buildHtmlReport(run.historyFile!)).html);
    const page = await browser.newPage({ viewport: { width: 1100, height: 1000 } });
    await page.goto(`file://${file}`);
    // Show what a click shows: the move that ended the run.
    await page.click('#run-view rect.visit.final');
    const bottom = await page
      .locator('#move-detail')
      .evaluate((el) => el.getBoundingClientRect().bottom + (globalThis as unknown as { scrollY: number }).scrollY);
    await page.evaluate(() => (globalThis as unknown as { scrollTo(x: number, y: number): void }).scrollTo(0, 0));
    await page.screenshot({
      path: OUT,
      fullPage: true,
      clip: { x: 0, y: 0, width: 1100, height: Math.ceil(bottom) + 16 },
    });
    console.log(`${OUT} (${run.id}, ${run.outcome})`);
  } finally {
    await browser.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
