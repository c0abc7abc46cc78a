// Chromium for the report's browser tests, driven by playwright-core (which downloads no
// browser). `findChromium` looks, in this order, at:
//   1. CHROMIUM_PATH, when set (and then nothing else: a wrong path is an error, not a hint);
//   2. the system's: chromium, chromium-browser, google-chrome or google-chrome-stable on PATH;
//   3. the Chromium shipped inside the devDependency @sparticuz/chromium (Linux x64, a
//      brotli-compressed headless shell), unpacked once per version under the temp folder —
//      so `npm ci` alone provides a browser.
// A missing browser fails the tests with how to get one; it never skips them.
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { chromium, type Browser, type Page } from 'playwright-core';

/** Flags that work in a container as root, with nothing reaching out to the network. */
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * What @sparticuz/chromium's headless shell needs on top: no zygote process (with no sandbox it
 * has nothing to do, and the package's builds expect it off). The package's own `args` are made
 * for AWS Lambda and are not taken whole: `--disable-web-security`,
 * `--allow-running-insecure-content` and site isolation turned off would weaken what these tests
 * check (that nothing from a history runs or leaves the page), and `--single-process` is for
 * Lambda's missing /dev/shm.
 */
const PACKAGED_FLAGS = ['--no-zygote'];

const SYSTEM_NAMES = ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable'];

const HOW_TO_GET_ONE =
  "Run `npm ci` (the devDependency @sparticuz/chromium ships a Chromium for Linux x64), install the system's " +
  '(Debian/Ubuntu: `apt-get install -y chromium`), or set CHROMIUM_PATH to a Chromium or Chrome binary.';

/** Where a Chromium was found, and the flags it is launched with. */
export interface FoundChromium {
  executablePath: string;
  source: 'CHROMIUM_PATH' | 'system' | '@sparticuz/chromium';
  args: string[];
}

function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir === '') continue;
    const file = path.join(dir, name);
    try {
      fs.accessSync(file, fs.constants.X_OK);
      if (fs.statSync(file).isFile()) return file;
    } catch {
      // not here
    }
  }
  return undefined;
}

/**
 * The Chromium inside @sparticuz/chromium, unpacked into `<tmp>/agent-sm-chromium-<version>`.
 * Its `executablePath()` unpacks into the temp folder it is given (TMPDIR); it runs in a child
 * process with TMPDIR set to a folder of its own, which is then renamed into place in one step.
 * So test files, checkouts and users that unpack at the same time never see a half-written
 * binary, and nothing is left loose in /tmp.
 */
async function packagedChromium(): Promise<string | undefined> {
  let entry: string;
  try {
    entry = require.resolve('@sparticuz/chromium');
  } catch {
    return undefined;
  }
  if (process.platform !== 'linux' || process.arch !== 'x64') return undefined;
  const root = path.resolve(path.dirname(entry), '..', '..');
  const { version } = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string };
  // One per version and per user (the files are the user's own, mode 700).
  const dir = path.join(os.tmpdir(), `agent-sm-chromium-${version}-${process.getuid?.() ?? 'user'}`);
  const binary = path.join(dir, 'chromium');
  if (fs.existsSync(binary)) return binary;
  const partial = fs.mkdtempSync(`${dir}.partial-`);
  try {
    const script =
      'const c = require(process.argv[1]); (c.default ?? c).executablePath().then((p) => process.stdout.write(p))';
    const { stdout } = await promisify(execFile)(process.execPath, ['-e', script, entry], {
      env: { ...process.env, TMPDIR: partial },
      timeout: 300_000,
    });
    if (stdout !== path.join(partial, 'chromium'))
      throw new Error(`@sparticuz/chromium unpacked to ${stdout}, not to ${partial}`);
    try {
      fs.renameSync(partial, dir);
    } catch (error) {
      // Another process put its copy in place first: use that one.
      if (!fs.existsSync(binary)) throw error;
    }
    return binary;
  } finally {
    fs.rmSync(partial, { recursive: true, force: true });
  }
}

/** The Chromium the browser tests use; throws saying how to get one when there is none. */
export async function findChromium(): Promise<FoundChromium> {
  const fromEnv = process.env.CHROMIUM_PATH;
  if (fromEnv !== undefined && fromEnv !== '') {
    if (!fs.existsSync(fromEnv))
      throw new Error(`CHROMIUM_PATH is ${fromEnv}, which does not exist. ${HOW_TO_GET_ONE}`);
    return { executablePath: fromEnv, source: 'CHROMIUM_PATH', args: FLAGS };
  }
  for (const name of SYSTEM_NAMES) {
    const file = onPath(name);
    if (file !== undefined) return { executablePath: file, source: 'system', args: FLAGS };
  }
  const packaged = await packagedChromium();
  if (packaged !== undefined)
    return { executablePath: packaged, source: '@sparticuz/chromium', args: [...FLAGS, ...PACKAGED_FLAGS] };
  throw new Error(
    `The browser tests need Chromium, and there is none: CHROMIUM_PATH is not set, none of ${SYSTEM_NAMES.join(', ')} is on PATH, and @sparticuz/chromium is ${process.platform === 'linux' && process.arch === 'x64' ? 'not installed' : `for Linux x64 only (this is ${process.platform} ${process.arch})`}. ${HOW_TO_GET_ONE}`,
  );
}

/** One browser per test file; playwright gives it a fresh, temporary user-data-dir. */
export async function launchBrowser(): Promise<Browser> {
  const found = await findChromium();
  return chromium.launch({ executablePath: found.executablePath, args: found.args });
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
export async function openFile(
  browser: Browser,
  file: string,
  viewport = { width: 1200, height: 900 },
): Promise<OpenedPage> {
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
