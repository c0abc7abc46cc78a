// docs/api/ is TypeDoc's output for the source as it is: the test regenerates it into a temporary
// folder and compares, file by file, so an export or a TSDoc comment changed without
// `npm run docs:api` fails here instead of leaving the reference behind.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT, entryPoints, writeApiReference } from '../helpers/apiReference';

const API_DIR = path.join(ROOT, 'docs', 'api');

/** Every file under `dir`, as paths relative to it, sorted. */
function filesUnder(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return (fs.readdirSync(dir, { recursive: true }) as string[])
    .filter((f) => fs.statSync(path.join(dir, f)).isFile())
    .map((f) => f.split(path.sep).join('/'))
    .sort();
}

/** What differs between the generated reference and the committed one, one line per file. */
function differences(generated: string, committed: string): string[] {
  const made = filesUnder(generated);
  const kept = filesUnder(committed);
  const keptSet = new Set(kept);
  const madeSet = new Set(made);
  return [
    ...made.filter((f) => !keptSet.has(f)).map((f) => `missing: docs/api/${f}`),
    ...kept.filter((f) => !madeSet.has(f)).map((f) => `no longer generated: docs/api/${f}`),
    ...made
      .filter((f) => keptSet.has(f))
      .filter(
        (f) => fs.readFileSync(path.join(generated, f), 'utf8') !== fs.readFileSync(path.join(committed, f), 'utf8'),
      )
      .map((f) => `differs: docs/api/${f}`),
  ];
}

describe('the API reference (docs/api/, TypeDoc)', () => {
  it('documents every entry point of package.json, and only those', () => {
    // typedoc.json's entry points: the integrations by a glob, as tsup's are, the library's own
    // subpaths by name, for `agent-state-machine/internal` is left out (not documented, not
    // covered by semver). Each other subpath must have its page.
    const config = JSON.parse(fs.readFileSync(path.join(ROOT, 'typedoc.json'), 'utf8')) as { entryPoints: string[] };
    expect(config.entryPoints).toEqual([
      'lib/index.ts',
      'lib/subpaths/history.ts',
      'lib/subpaths/replay.ts',
      'lib/subpaths/batch.ts',
      'lib/subpaths/report.ts',
      'lib/integrations/*/index.ts',
    ]);
    const pages = fs
      .readdirSync(path.join(API_DIR, 'agent-state-machine'))
      .filter((d) => fs.existsSync(path.join(API_DIR, 'agent-state-machine', d, 'README.md')));
    const subpaths = Object.keys(entryPoints()).filter((s) => s !== '.' && s !== './internal');
    expect(pages.sort()).toEqual(subpaths.map((s) => s.slice(2)).sort());
  });

  it('is what `npm run docs:api` generates from the source now', () => {
    const out = fs.mkdtempSync(path.join(os.tmpdir(), 'docs-api-'));
    try {
      writeApiReference(out);
      const stale = differences(out, API_DIR);
      if (stale.length > 0) {
        const shown = stale.slice(0, 10).join('\n  ');
        const more = stale.length > 10 ? `\n  … and ${stale.length - 10} more` : '';
        throw new Error(`docs/api is stale: run npm run docs:api\n  ${shown}${more}`);
      }
    } finally {
      fs.rmSync(out, { recursive: true, force: true });
    }
  }, 180_000);
});
