import fs from 'node:fs';
import path from 'node:path';
import { defineConfig, type Options, type Plugin } from 'tsup';

// Each folder in lib/integrations/ is a subpath export (`agent-state-machine/<name>`) built from
// its index.ts. Integrations import the library by its own name, so their bundles load the main
// entry instead of carrying a second copy of it (one class per error, one table per process).
const integrations = fs.existsSync('lib/integrations')
  ? fs.readdirSync('lib/integrations').filter((name) => fs.existsSync(`lib/integrations/${name}/index.ts`))
  : [];

// Each file in lib/subpaths/ is a subpath of the library itself (`agent-state-machine/history`, …).
// They are built with the main entry in one build that splits the code they share into chunks,
// so that a class the main entry and a subpath both reach is one class in the process.
const subpaths = fs.existsSync('lib/subpaths')
  ? fs.readdirSync('lib/subpaths').flatMap((file) => (file.endsWith('.ts') ? [file.slice(0, -3)] : []))
  : [];

// The optional peers (package.json `peerDependencies`), name → range, for the errors of a missing one.
const peerRanges: Record<string, string> = (
  JSON.parse(fs.readFileSync('package.json', 'utf8')) as { peerDependencies: Record<string, string> }
).peerDependencies;
const packageOf = (specifier: string) =>
  specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/');

interface BuiltChunk {
  entryPoint?: string;
  exports: string[];
  imports: { path: string; external?: boolean }[];
}

/**
 * An integration's code is built to `<name>/sdk.{mjs,cjs}`; its entry `<name>/index.{mjs,cjs}`
 * is written here, after the build, and loads it. Where that code loads optional peers (found
 * in the build's own record of its imports, through the chunks it shares), the entry catches a
 * failed load and throws instead what `peerLoadError` makes of it: one line naming each missing
 * peer, its range and `npm install`. An ESM module cannot catch its own static imports, so the
 * ESM entry imports the code dynamically (top-level await) and re-exports its names; the
 * CommonJS one requires it in a `try`. The check runs only after a failure: with the peers
 * present, an import costs one more small module. The types are the integration's index.ts.
 */
const peerEntries: Plugin = {
  name: 'peer-entries',
  renderChunk(_code, info) {
    const chunks = ((this as unknown as { chunks?: Map<string, BuiltChunk> }).chunks ??= new Map());
    chunks.set(path.resolve(info.path), {
      entryPoint: info.entryPoint,
      exports: info.exports ?? [],
      imports: info.imports ?? [],
    });
  },
  buildEnd() {
    const chunks = (this as unknown as { chunks?: Map<string, BuiltChunk> }).chunks ?? new Map<string, BuiltChunk>();
    const peersOf = (file: string, seen = new Set<string>()): string[] => {
      if (seen.has(file)) return [];
      seen.add(file);
      return (chunks.get(file)?.imports ?? []).flatMap((i) =>
        i.external ? (packageOf(i.path) in peerRanges ? [packageOf(i.path)] : []) : peersOf(path.resolve(i.path), seen),
      );
    };
    const esm = this.format === 'esm';
    const ext = esm ? 'mjs' : 'cjs';
    for (const [file, chunk] of chunks) {
      const name = /^lib\/integrations\/([^/]+)\/index\.ts$/.exec(chunk.entryPoint ?? '')?.[1];
      // Only the entries built as sdk (a test's build of an integration straight to index is left alone).
      if (name === undefined || path.basename(file) !== `sdk.${ext}`) continue;
      if (chunk.exports.includes('default'))
        throw new Error(`lib/integrations/${name}/index.ts has a default export, which peerEntries cannot re-export`);
      const subpath = `agent-state-machine/${name}`;
      const peers = Object.fromEntries([...new Set(peersOf(file))].sort().map((p) => [p, peerRanges[p]!]));
      const header = `// ${subpath}: its code is ./sdk.${ext}; written by tsup.config.ts (peerEntries).\n`;
      let entry: string;
      if (Object.keys(peers).length === 0)
        entry = esm ? `export * from './sdk.mjs';\n` : `'use strict';\nmodule.exports = require('./sdk.cjs');\n`;
      else if (esm)
        entry = [
          'let sdk;',
          'try {',
          "  sdk = await import('./sdk.mjs');",
          '} catch (error) {',
          "  const { peerLoadError } = await import('agent-state-machine/internal');",
          `  throw peerLoadError(error, '${subpath}', ${JSON.stringify(peers)}, import.meta.url);`,
          '}',
          `export const { ${chunk.exports.join(', ')} } = sdk;`,
          '',
        ].join('\n');
      else
        entry = [
          "'use strict';",
          'try {',
          "  module.exports = require('./sdk.cjs');",
          '} catch (error) {',
          `  throw require('agent-state-machine/internal').peerLoadError(error, '${subpath}', ${JSON.stringify(peers)}, __filename);`,
          '}',
          '',
        ].join('\n');
      fs.writeFileSync(path.join(path.dirname(file), `index.${ext}`), header + entry);
    }
  },
};

const shared: Options = {
  format: ['esm', 'cjs'],
  sourcemap: true,
  target: 'node20',
  // Explicit extensions, so Node never has to guess a file's module kind. Types come out as
  // *.d.ts (CommonJS, as the package has no "type") and *.d.mts (ESM).
  outExtension: ({ format }) => ({ js: format === 'cjs' ? '.cjs' : '.mjs' }),
  external: ['agent-state-machine'],
  // The ESM build defines `require` (from the module's own URL) for the dependencies loaded at
  // first use (lib/internal/requireOptional.ts); esbuild's own `__require` then finds it.
  banner: ({ format }) =>
    format === 'esm'
      ? {
          js: "import { createRequire as __agentSmRequire } from 'node:module'; const require = __agentSmRequire(import.meta.url);",
        }
      : {},
};

export default defineConfig([
  {
    ...shared,
    entry: {
      index: 'lib/index.ts',
      ...Object.fromEntries(subpaths.map((n) => [`${n}/index`, `lib/subpaths/${n}.ts`])),
      ...Object.fromEntries(integrations.map((n) => [`${n}/sdk`, `lib/integrations/${n}/index.ts`])),
    },
    // The types of each entry; an integration's are its index.ts, the entry peerEntries writes.
    dts: {
      entry: {
        index: 'lib/index.ts',
        ...Object.fromEntries(subpaths.map((n) => [`${n}/index`, `lib/subpaths/${n}.ts`])),
        ...Object.fromEntries(integrations.map((n) => [`${n}/index`, `lib/integrations/${n}/index.ts`])),
      },
    },
    plugins: [peerEntries],
    clean: true,
    // Shared chunks for CommonJS too (tsup's default splits only ESM), for the reason above.
    splitting: true,
    // tsup turns the split ESM chunks into CommonJS by rewriting them, which renames classes
    // (`_class4` for BudgetExceededError); keepNames gives every class and function its own
    // name back, as users see it in `error.constructor.name` and in logs.
    keepNames: true,
    // That rewrite (sucrase) also turns every `?.` and `??` into a call of a helper given
    // closures (`_optionalChain([x, 'optionalAccess', (_) => _.y])`): an allocation or more
    // each, on every move, write and check. esbuild lowers them first into plain conditionals,
    // which leave sucrase nothing to rewrite (measured: a zero-latency batch run 15–20% faster).
    esbuildOptions(options, { format }) {
      if (format === 'cjs')
        options.supported = { ...options.supported, 'optional-chain': false, 'nullish-coalescing': false };
    },
  },
  // The `agent-sm` executable (package.json `bin`): CommonJS only, no types; tsup keeps its shebang.
  { ...shared, entry: { cli: 'lib/cli/bin.ts' }, format: ['cjs'], dts: false, clean: false },
]);
