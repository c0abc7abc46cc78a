// Chromium for the report's browser tests: Debian's /usr/bin/chromium (`apt-get install -y
// chromium`; .ci/run installs it when missing) driven by playwright-core. A missing browser
// fails the tests with how to get one; it never skips them.
import * as fs from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Flags that work in a container as root, with nothing reaching out to the network. */
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** One browser per test file; playwright gives it a fresh, temporary user-data-dir. */
export async function launchBrowser(): Promise<Browser> {
  if (!fs.existsSync(CHROMIUM)) {
    throw new Error(`The browser tests need Chromium at ${CHROMIUM}: run \`apt-get update && apt-get install -y chromium\` (as .ci/run does), or set CHROMIUM_PATH to a Chromium binary.`);
  }
  return chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
}

/** A page opened from disk, with everything it logged and asked for. */
export interface OpenedPage {
  page: Page;
  url: string;
  /** Console messages of type error or warning, and uncaught exceptions. */
  problems: string[];
  /** Every URL the page requested, its own included. */
  requests: string[];
  close(): Promise<void>;
}

/** Opens `file` in a new context (no shared storage between tests) at a desktop size. */
export async function openFile(browser: Browser, file: string, viewport = { width: 1200, height: 900 }): Promise<OpenedPage> {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  const problems: string[] = [];
  const requests: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') problems.push(`console.${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('request', (r) => requests.push(r.url()));
  const url = `file://${file}`;
  await page.goto(url);
  return { page, url, problems, requests, close: () => context.close() };
}
