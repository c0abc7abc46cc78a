// Runs one suite in a process of its own, for bench/index.ts: imports the file named on the
// command line, awaits its `run()` and sends the result (a SuiteResult, or null for a suite
// that only prints) back to the runner. A fresh process per suite gives each a clean heap
// (peak-memory figures mean something) and `--expose-gc`, and a crash stays in its suite.
import { serveChild, type SuiteResult } from './harness';

interface SuiteModule {
  run?: unknown;
}

const file = process.argv[2];

if (file === undefined || !serveChild(() => runSuite(file))) {
  console.error(
    'bench/suiteChild.ts is started by bench/index.ts: node --expose-gc --import tsx bench/suiteChild.ts <suite file>',
  );
  process.exitCode = 2;
}

async function runSuite(suiteFile: string): Promise<SuiteResult | null> {
  const mod = (await import(suiteFile)) as SuiteModule;
  if (typeof mod.run !== 'function') throw new Error(`${suiteFile} does not export a run() function`);
  const result = (await (mod.run as () => unknown)()) as SuiteResult | undefined;
  return result ?? null;
}
