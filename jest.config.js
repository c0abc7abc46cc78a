// Times in formatted output are local; pin the zone so snapshots agree on every machine.
process.env.TZ = 'UTC';

const nodeMajor = Number(process.versions.node.split('.')[0]);

// The subpaths of the library itself (lib/subpaths/<name>.ts), as against its integrations.
const CORE_SUBPATHS = ['history', 'replay', 'batch', 'report', 'internal'];

/** What every project shares. */
const base = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  // Type errors are caught by `tsc --noEmit` in `npm test`; ts-jest only transpiles
  // (tsconfig's isolatedModules makes it use transpileModule).
  // Emitted as CommonJS, `import()` included: Jest loads modules through its own registry, and a
  // dynamic import there needs --experimental-vm-modules (the bundle splits at those imports).
  transform: {
    '^.+\\.ts$': ['ts-jest', { diagnostics: false, tsconfig: { module: 'CommonJS', moduleResolution: 'Node10' } }],
  },
  moduleFileExtensions: ['ts', 'js', 'json'],
  // Integrations import the library by its own name (see tsconfig.json `paths`).
  moduleNameMapper: {
    // A dynamic import names its file as Node will find it once built (`./scheduleBatch.js`).
    '^(\\.{1,2}/.+)\\.js$': '$1',
    '^agent-state-machine$': '<rootDir>/lib/index.ts',
    [`^agent-state-machine/(${CORE_SUBPATHS.join('|')})$`]: '<rootDir>/lib/subpaths/$1.ts',
  },
};

// The tests that load `ai` or `openai`. They run twice: against the majors installed under
// those names (ai 6, openai 6), and against the newer majors installed under npm aliases
// (`ai-7`, `openai-7`, see package.json), which need Node 22 or later.
const sdkTests = [
  '<rootDir>/test/integrations/ai-sdk/**/*.test.ts',
  '<rootDir>/test/integrations/openai/**/*.test.ts',
  '<rootDir>/test/examples/ai-sdk-agent.test.ts',
  '<rootDir>/test/examples/coding-agents.test.ts',
  '<rootDir>/test/examples/wrap-a-loop.test.ts',
  '<rootDir>/test/agent/retries.test.ts',
  '<rootDir>/test/oneListOfLimits.test.ts',
  // The packed library installed beside the 7.x majors from the registry.
  '<rootDir>/test/install.v7.test.ts',
];

// The tests of SDKs that need Node 22 or later whatever their major (@openai/agents, on openai 7).
const nodeTwentyTwoOnly = ['/test/integrations/openai-agents/'];

/** @type {import('jest').Config[]} */
const projects = [
  {
    ...base,
    displayName: 'default',
    testMatch: ['**/*.test.ts'],
    // *.v7.test.ts: what only ai 7 / openai 7 have (LanguageModelV4, isStepCount, toolApproval, …).
    testPathIgnorePatterns: ['/node_modules/', '\\.v7\\.test\\.ts$', ...nodeTwentyTwoOnly],
  },
];

if (nodeMajor >= 22) {
  projects.push({
    ...base,
    displayName: 'ai7-openai7',
    testMatch: sdkTests,
    moduleNameMapper: {
      ...base.moduleNameMapper,
      '^ai$': 'ai-7',
      '^ai/(.*)$': 'ai-7/$1',
      '^openai$': 'openai-7',
      '^openai/(.*)$': 'openai-7/$1',
      // The OpenAI provider's major that pairs with ai 7 (LanguageModelV4).
      '^@ai-sdk/openai$': '@ai-sdk/openai-4',
      // Imported by file name, which picks zod's ESM build; the CommonJS twin sits beside it.
      '^zod/v4/locales/en\\.js$': 'zod/v4/locales/en.cjs',
    },
    // ai 7 and its @ai-sdk packages (and @workflow/serde, which they load) are ESM only.
    transform: { ...base.transform, '^.+\\.js$': '<rootDir>/test/helpers/esmToCommonJs.cjs' },
    transformIgnorePatterns: ['/node_modules/(?!(ai-7|@ai-sdk|@workflow)/)'],
  });
  projects.push({
    ...base,
    displayName: 'openai-agents',
    testMatch: nodeTwentyTwoOnly.map((dir) => `<rootDir>${dir}**/*.test.ts`),
  });
}

/** @type {import('jest').Config} */
module.exports = {
  projects,
  // On 2 cores jest runs every file in its own process (in band): a handle one file leaves open
  // (a timer, a socket) would keep that process, and CI, waiting once every test has passed. A
  // full run of main on 2026-12-02 did: it hung after "Jest did not exit" with all 2,110 tests
  // run. Exit when the tests are done. Jest's "Force exiting Jest" line says nothing of a leak:
  // it prints on every run. To look for one, run a folder with `--detectOpenHandles
  // --forceExit=false` under a `timeout` (2026-12-06: every folder exited on its own).
  forceExit: true,
};
