// Lint rules for the whole tree (`npm run lint`, part of `npm test`); prettier owns layout.
//
// The set is typescript-eslint's `recommended`, not `recommendedTypeChecked`: the type-aware
// set builds a whole TypeScript program and took 85 s on this 2-core machine, against ~12 s
// for this one; `npm run typecheck` already runs the compiler. A few chosen rules are added.
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

export default defineConfig(
  // .gitignore'd output and caches.
  { ignores: ['dist/', '.dist-*/', 'build/', 'coverage/', '.bench-tmp/'] },
  // A disable comment that no longer suppresses anything must go.
  { linterOptions: { reportUnusedDisableDirectives: 'error' } },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    rules: {
      // `==` only for `x == null` (null or undefined); everywhere else strict equality.
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      // Down from the default: `let adapter!: Agent` that a closure (a tool that cancels the
      // agent) reads before the one assignment stays a `let`, so that a closure run too early
      // finds it unset rather than in the temporal dead zone, and the declaration stays put.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      // Type-only imports say so, so that they vanish from the build and never load a module
      // (an optional peer dependency, a layer above); inline `type` is the tree's common form.
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': [
        'error',
        {
          // `_ctx`: a parameter kept to match the signature a caller passes it.
          argsIgnorePattern: '^_',
          // `const { execute: _execute, ...rest } = tool`: omitting a property by destructuring.
          ignoreRestSiblings: true,
        },
      ],
    },
  },
  {
    // The library never writes to the console on its own: it logs through its logger or
    // reports to the caller. The CLI writes to stdout and stderr by design.
    files: ['lib/**', 'states/**'],
    ignores: ['lib/cli/**'],
    rules: { 'no-console': 'error' },
  },
  {
    // `import OpenAI = require('openai')` is how a CommonJS TypeScript file imports, and the
    // .cts fixtures are there to compile as a CommonJS user would.
    files: ['**/*.cts'],
    rules: { '@typescript-eslint/no-require-imports': ['error', { allowAsImport: true }] },
  },
  {
    // Plain CommonJS (the package has no "type", so *.js is CommonJS too) run by Node.
    files: ['**/*.js', '**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { process: 'readonly', console: 'readonly' } },
    // In CommonJS, require() is the import.
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // The ESM config files run by Node.
    files: ['**/*.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
  },
  // Last: turns off every rule that is about layout, which prettier decides.
  prettier,
);
