import * as fs from 'node:fs';
import * as path from 'node:path';
import { OPTION_DEFAULTS } from '../../lib/internal/optionTable';

// Each option's default is declared once (lib/internal/optionTable.ts) and every entry point
// reads it from there. What the docs say must be that value: each doc comment of an option's
// declaration (in every options type under lib/) that states a default states the declared one,
// and each option with a default has a doc comment that states it.

/** The rooms whose types declare the entry points' options (the CLI's flags are other options). */
const ROOMS = ['agent', 'batch', 'integrations'].map((room) => path.join(__dirname, '../../lib', room));

/** Every `.ts` file under `dir`. */
function libFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return libFiles(full);
    return e.name.endsWith('.ts') ? [full] : [];
  });
}

/** The doc comments right above each `name?:` member in lib/, with where each is. */
function docsOf(name: string): Array<{ where: string; doc: string }> {
  const out: Array<{ where: string; doc: string }> = [];
  const member = new RegExp(`^\\s*(readonly\\s+)?${name}\\?:`);
  for (const file of ROOMS.flatMap((room) => libFiles(room))) {
    const lines = fs.readFileSync(file, 'utf8').split('\n');
    lines.forEach((line, i) => {
      if (!member.test(line) || !lines[i - 1]?.trim().endsWith('*/')) return;
      let start = i - 1;
      while (start > 0 && !lines[start]!.includes('/**')) start--;
      out.push({ where: `${path.relative(process.cwd(), file)}:${i + 1}`, doc: lines.slice(start, i).join(' ') });
    });
  }
  return out;
}

/** The value a doc states after "Default" ("Default 2,000 ms", "Default: `'error'`", "Default off"), as written plainly. */
function statedDefault(doc: string): string | undefined {
  const m = /Default:?\s+`?'?([\w.,-]+)/.exec(doc);
  const stated = m?.[1]?.replace(/,/g, '').replace(/\.$/, '');
  return stated === 'off' ? 'false' : stated === 'on' ? 'true' : stated;
}

describe('each declared default is the one the docs state', () => {
  it.each(Object.entries(OPTION_DEFAULTS))('%s (declared %p)', (name, value) => {
    const docs = docsOf(name);
    const stating = docs.flatMap(({ where, doc }) => {
      const stated = statedDefault(doc);
      return stated === undefined ? [] : [{ where, stated }];
    });
    expect(stating.length).toBeGreaterThan(0);
    for (const { where, stated } of stating) expect({ where, stated }).toEqual({ where, stated: String(value) });
  });
});
