/**
 * Lists what each entry point of the package exports, with the first sentence of each export's
 * TSDoc, straight from the source. test/exports.test.ts pins the lists; the API reference itself
 * is TypeDoc's (docs/api/, `npm run docs:api`). After a deliberate change of the exports,
 * `npx tsx test/helpers/apiReference.ts --pin --write` rewrites the pinned lists and docs/api/.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

export const ROOT = path.resolve(__dirname, '..', '..');

export interface ApiExport {
  name: string;
  kind: 'class' | 'function' | 'constant' | 'type';
  /** The first sentence of its TSDoc, or '' when it has none. */
  summary: string;
}

/**
 * The package's entry points: `.` and every `./<name>` subpath in package.json that serves code,
 * each the library's own (lib/subpaths/<name>.ts) or an integration's (lib/integrations/<name>/).
 */
export function entryPoints(): Record<string, string> {
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
    exports: Record<string, unknown>;
  };
  const entries: Record<string, string> = {};
  for (const subpath of Object.keys(pkg.exports)) {
    if (subpath === './package.json') continue;
    const name = subpath.slice(2);
    entries[subpath] =
      subpath === '.'
        ? 'lib/index.ts'
        : fs.existsSync(path.join(ROOT, 'lib', 'subpaths', `${name}.ts`))
          ? `lib/subpaths/${name}.ts`
          : `lib/integrations/${name}/index.ts`;
  }
  return entries;
}

const firstSentence = (text: string): string => {
  const flat = text.replace(/\s+/g, ' ').trim();
  const end = flat.search(/\.(\s|$)/);
  return (end === -1 ? flat : flat.slice(0, end + 1)).replace(/\|/g, '\\|');
};

/** Every export of every entry point, sorted by name. */
export function listExports(): Record<string, ApiExport[]> {
  const entries = entryPoints();
  const program = ts.createProgram(
    Object.values(entries).map((f) => path.join(ROOT, f)),
    {
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      paths: { 'agent-state-machine': ['./lib/index.ts'], 'agent-state-machine/*': ['./lib/subpaths/*.ts'] },
      baseUrl: ROOT,
    },
  );
  const checker = program.getTypeChecker();
  const result: Record<string, ApiExport[]> = {};
  for (const [subpath, file] of Object.entries(entries)) {
    const source = program.getSourceFile(path.join(ROOT, file));
    if (source === undefined) throw new Error(`entry point ${subpath}: ${file} does not exist`);
    const moduleSymbol = checker.getSymbolAtLocation(source);
    if (moduleSymbol === undefined) throw new Error(`entry point ${subpath}: ${file} exports nothing`);
    result[subpath] = checker
      .getExportsOfModule(moduleSymbol)
      .map((exported) => {
        const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
        const flags = symbol.flags;
        const kind: ApiExport['kind'] =
          flags & ts.SymbolFlags.Class
            ? 'class'
            : flags & ts.SymbolFlags.Function
              ? 'function'
              : flags & ts.SymbolFlags.Value
                ? 'constant'
                : 'type';
        const summary = firstSentence(ts.displayPartsToString(symbol.getDocumentationComment(checker)));
        return { name: exported.name, kind, summary };
      })
      .sort((a, b) => (a.name < b.name ? -1 : 1));
  }
  return result;
}

/**
 * Runs TypeDoc (typedoc.json) as `npm run docs:api` does, into `out` (default docs/api/). Its
 * warnings are errors there, so a broken `{@link}` fails it; they are thrown with its output.
 */
export function writeApiReference(out?: string): void {
  // TypeDoc's package exports no bin path; its folder is found through its package.json.
  const bin = path.join(path.dirname(require.resolve('typedoc/package.json')), 'bin', 'typedoc');
  const args = [bin, '--logLevel', 'Warn', ...(out === undefined ? [] : ['--out', out])];
  try {
    execFileSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8', stdio: 'pipe' });
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`typedoc failed:\n${stdout ?? ''}${stderr ?? ''}`, { cause: error });
  }
}

/** Rewrites the PINNED lists of test/exports.test.ts from the current exports (`--pin`). */
function pinExports(): void {
  const file = path.join(ROOT, 'test', 'exports.test.ts');
  const head = 'const PINNED: Record<string, string[]> = {\n';
  const body = Object.entries(listExports())
    .map(([entry, list]) => {
      const lines: string[] = [];
      let line = '   ';
      for (const e of list) {
        const piece = ` '${e.name}',`;
        if ((line + piece).length > 100) {
          lines.push(line);
          line = '   ';
        }
        line += piece;
      }
      lines.push(line);
      return `  '${entry}': [\n${lines.join('\n')}\n  ],`;
    })
    .join('\n');
  const text = fs.readFileSync(file, 'utf8');
  const start = text.indexOf(head) + head.length;
  const end = text.indexOf('\n};\n', start);
  fs.writeFileSync(file, text.slice(0, start) + body + text.slice(end));
  // Laid out as the rest of the tree, so that `npm run lint` passes right after a pin.
  execFileSync(process.execPath, [require.resolve('prettier/bin/prettier.cjs'), '--write', file], { stdio: 'ignore' });
  console.log('test/exports.test.ts: pinned lists rewritten');
}

if (require.main === module && process.argv.includes('--pin')) pinExports();
if (require.main === module && process.argv.includes('--write')) {
  writeApiReference();
  console.log('docs/api/: API reference rewritten');
}
