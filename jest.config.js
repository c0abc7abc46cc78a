// Times in formatted output are local; pin the zone so snapshots agree on every machine.
process.env.TZ = 'UTC';

/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  // Type errors are caught by `tsc --noEmit` in `npm test`; ts-jest only transpiles
  // (tsconfig's isolatedModules makes it use transpileModule).
  transform: { '^.+\\.ts$': ['ts-jest', { diagnostics: false }] },
  moduleFileExtensions: ['ts', 'js', 'json'],
  // Integrations import the library by its own name (see tsconfig.json `paths`).
  moduleNameMapper: { '^agent-state-machine$': '<rootDir>/lib/index.ts' },
};
