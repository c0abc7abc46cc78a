// `npx tsx bench/reportSize.ts [runs…]`: how big the batch page `agent-sm report <historyDir>`
// writes is, and how long it takes to make, for batches of scripted runs (default 100 and
// 10,000). Each run is one turn of 0–5 tool rounds (seeded, so every machine gets the same
// histories), its history written by runBatch as in a real batch. Prints, per size: the
// history folder's bytes, the page's bytes (and gzipped), and the time to build the page, over
// three builds (min–max). Not part of `npm test`. REPORT_SIZE_JOURNAL=1 writes the runs with
// their journal (what was said), which the batch page leaves out: its size must not move. REPORT_SIZE_OUT=<folder> keeps each page
// there (batch-<runs>.html). With Chromium at /usr/bin/chromium (or CHROMIUM_PATH) it also
// opens each page and times loading it, sorting its table by cost and opening the top run.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { gzipSync } from 'node:zlib';
import { chromium } from 'playwright-core';
import { buildHtmlReport } from '../lib/subpaths/report';
import { createScriptedAgent, runBatch, type BatchTask, type ScriptedReply } from '../lib/index';

/** REPORT_SIZE_JOURNAL=1: the runs keep a journal (what was said), as `journal: true` writes it. */
const JOURNAL = process.env['REPORT_SIZE_JOURNAL'] === '1';

function seeded(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function tasks(count: number): BatchTask[] {
  const random = seeded(7);
  const between = (lo: number, hi: number): number => lo + Math.floor(random() * (hi - lo + 1));
  return Array.from({ length: count }, (_, i): BatchTask => {
    const reply = (last: boolean): ScriptedReply => {
      const usage = {
        inputTokens: between(1_500, 9_000),
        outputTokens: between(40, 600),
        costUsd: between(5, 45) / 1000,
      };
      return last
        ? { text: 'Fixed; the test passes.', usage }
        : {
            toolCalls: [
              {
                id: `call-${i}-${between(0, 1e6)}`,
                name: random() < 0.5 ? 'run_tests' : 'edit_file',
                input: { path: `src/file-${between(1, 400)}.ts` },
              },
            ],
            usage,
          };
    };
    const replies = [...Array.from({ length: between(0, 5) }, () => reply(false)), reply(true)];
    return {
      id: `task-${String(i).padStart(5, '0')}`,
      input: 'Fix the failing test.',
      agent: () =>
        createScriptedAgent({
          replies,
          tools: { run_tests: { output: '1 failing, 41 passing' }, edit_file: { output: 'edited 1 file' } },
        }),
    };
  });
}

const kb = (n: number): string => `${(n / 1024).toFixed(0)} KiB`;
const mb = (n: number): string => `${(n / 1024 / 1024).toFixed(1)} MiB`;
const size = (n: number): string => (n >= 1024 * 1024 ? mb(n) : kb(n));

async function main(): Promise<void> {
  const counts = process.argv
    .slice(2)
    .map(Number)
    .filter((n) => n > 0);
  console.log(`Node ${process.version}, ${os.cpus().length} × ${os.cpus()[0]?.model ?? '?'}`);
  for (const count of counts.length > 0 ? counts : [100, 10_000]) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-report-size-'));
    try {
      await runBatch(tasks(count), {
        concurrency: 16,
        historyDir: dir,
        logger: false,
        total: { maxCostUsd: count, strict: false },
        journal: JOURNAL,
      });
      const historyBytes = fs.readdirSync(dir).reduce((sum, f) => sum + fs.statSync(path.join(dir, f)).size, 0);
      const times: number[] = [];
      let html = '';
      for (let i = 0; i < 3; i++) {
        const t0 = performance.now();
        html = (await buildHtmlReport(dir)).html;
        times.push(performance.now() - t0);
      }
      const bytes = Buffer.byteLength(html);
      if (process.env.REPORT_SIZE_OUT !== undefined)
        fs.writeFileSync(path.join(process.env.REPORT_SIZE_OUT, `batch-${count}.html`), html);
      console.log(
        `${count.toLocaleString('en-US')} runs: histories ${size(historyBytes)}; page ${size(bytes)} (${size(gzipSync(html).length)} gzipped); ` +
          `built in ${Math.min(...times).toFixed(0)}–${Math.max(...times).toFixed(0)} ms`,
      );
      const file = path.join(dir, 'report.html');
      fs.writeFileSync(file, html);
      await timeInBrowser(file);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
}

/** Load, sort by cost, open the top run: three times each in a fresh page, min–max. */
async function timeInBrowser(file: string): Promise<void> {
  const executablePath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
  if (!fs.existsSync(executablePath))
    return console.log(`  (no Chromium at ${executablePath}: browser timings skipped)`);
  const browser = await chromium.launch({
    executablePath,
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
  const load: number[] = [];
  const sort: number[] = [];
  const open: number[] = [];
  try {
    for (let i = 0; i < 3; i++) {
      const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
      let t = performance.now();
      await page.goto(`file://${file}`);
      await page.waitForSelector('#runs tbody tr');
      load.push(performance.now() - t);
      t = performance.now();
      await page.click('button.sort[data-key="cost"]');
      sort.push(performance.now() - t);
      t = performance.now();
      await page.click('#runs tbody tr:first-child');
      await page.waitForSelector('#run-view rect.visit');
      open.push(performance.now() - t);
      await page.close();
    }
  } finally {
    await browser.close();
  }
  const span = (xs: number[]): string => `${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)} ms`;
  console.log(`  in Chromium: load ${span(load)}, sort by cost ${span(sort)}, open a run ${span(open)}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
