import { defineConfig } from 'tsup';

export default defineConfig({
  // `cli` is the `agent-sm` executable (package.json `bin`); tsup keeps its shebang.
  entry: { index: 'lib/index.ts', cli: 'lib/cli/bin.ts' },
  format: ['esm', 'cjs'],
  dts: true,
  sourcemap: true,
  clean: true,
  target: 'node20',
  // Explicit extensions, so Node never has to guess a file's module kind. Types come out as
  // index.d.ts (CommonJS, as the package has no "type") and index.d.mts (ESM).
  outExtension: ({ format }) => ({ js: format === 'cjs' ? '.cjs' : '.mjs' }),
});
