// The layers of lib/, checked by `npm run check:layers` (part of `npm test`).
// Each folder may depend only on the folders above it:
//   internal  <-  machine  <-  history
//                machine  <-  agent  <-  batch
//   observe on agent (your own loop, mirrored from its fetch and its marked tools)
//   replay on agent and history (a run re-driven from its journal), below batch and cli
//   report on history and batch (pure pages, one I/O loader); telemetry on history;
//   cli on history, batch, report and telemetry; integrations on the public entries (lib/index.ts,
//   lib/subpaths/*.ts, by the package's name) and internal.
// states/ stands on nothing in lib/. No entry (the main one, lib/subpaths/*) loads the CLI or an
// integration, and nothing of the library's own imports an entry.
//
// Inside lib/agent/, rooms (each one's README.md says what it holds), each on the ones before it:
//   the words: lib/agent/*.ts but the two entries (the loop's contract, a turn's result and
//     errors, the limits and usage, the approval gate, the extension states)
//   money, options  <-  journal (on money), retry (on options)  <-  stall (on journal)
//   <-  turn (the core both drivers share)  <-  calls  <-  endings
//   <-  adapter, mirror (the two drivers, which never use each other)
//   <-  the entries: AgentWithStateMachine.ts (on adapter), StepMirror.ts (on mirror).
//
// Inside lib/batch/, rooms (each one's README.md says what it holds) under the batch itself
// (lib/batch/*.ts: runBatch, its options, scheduler and report), each on the ones named:
//   keeping (the stores and the files a batch keeps)  <-  resume, tasks, raises  <-  reading (on raises)
//   <-  approvals (on tasks and reading). No room imports the batch's own files.
const layer = (name, mayNotUse, comment) => ({
  name,
  comment,
  severity: 'error',
  from: { path: `^lib/${name.replace(/-.*/, '')}/` },
  to: { path: `^(${mayNotUse.map((d) => (d === 'states' ? 'states/' : `lib/${d}/`)).join('|')})` },
});

const AGENT_ENTRIES = ['AgentWithStateMachine', 'StepMirror'];
// A room of lib/agent/ may use the words and the rooms it names, and no entry (agent-rooms-under-entries).
const agentRoom = (room, mayUse, comment) => ({
  name: `agent-${room}-room`,
  comment,
  severity: 'error',
  from: { path: `^lib/agent/${room}/` },
  to: { path: '^lib/agent/', pathNot: `^lib/agent/((${[room, ...mayUse].join('|')})/|[^/]+\\.ts$)` },
});
const BELOW_TURN = ['journal', 'money', 'retry', 'options', 'stall'];
// A room of lib/batch/ may use the rooms it names, and nothing of the batch above the rooms.
const batchRoom = (room, mayUse, comment) => ({
  name: `batch-${room}-room`,
  comment,
  severity: 'error',
  from: { path: `^lib/batch/${room}/` },
  to: { path: '^lib/batch/', pathNot: `^lib/batch/(${[room, ...mayUse].join('|')})/` },
});

/** @type {import('dependency-cruiser').IForbiddenRuleType[]} */
const forbidden = [
  { name: 'no-cycles', severity: 'error', from: {}, to: { circular: true } },
  layer(
    'internal-stands-alone',
    [
      'machine',
      'agent',
      'batch',
      'history',
      'replay',
      'report',
      'telemetry',
      'cli',
      'integrations',
      'states',
      'observe',
    ],
    'internal/ holds helpers that depend on nothing of ours',
  ),
  layer(
    'machine-below-agent',
    ['agent', 'batch', 'history', 'replay', 'report', 'telemetry', 'cli', 'integrations', 'observe'],
    'the machine knows nothing of agents, batches or files',
  ),
  layer(
    'history-on-machine',
    ['agent', 'batch', 'replay', 'report', 'telemetry', 'cli', 'integrations', 'observe'],
    'history files stand on the machine alone',
  ),
  layer(
    'agent-below-batch',
    ['batch', 'history', 'replay', 'report', 'telemetry', 'cli', 'integrations', 'observe'],
    'the adapter knows nothing of batches or files',
  ),
  layer(
    'replay-below-batch',
    ['batch', 'report', 'telemetry', 'cli', 'integrations'],
    'a replay re-drives the adapter from a history file, for batches (resume) and the CLI to use',
  ),
  layer(
    'batch-below-cli',
    ['report', 'telemetry', 'cli', 'integrations'],
    'a batch knows nothing of its report pages, telemetry, the CLI or the integrations',
  ),
  layer(
    'report-below-cli',
    ['telemetry', 'cli', 'integrations'],
    'report pages stand on history and batch, never on the CLI or an SDK',
  ),
  layer(
    'telemetry-on-history',
    ['agent', 'batch', 'replay', 'report', 'cli', 'integrations', 'observe'],
    'the OTLP export stands on history files alone',
  ),
  layer(
    'observe-on-agent',
    ['batch', 'history', 'replay', 'report', 'telemetry', 'cli', 'integrations'],
    'an observed loop is a mirror driven from its fetch and its tools: it knows nothing of batches or files',
  ),
  layer('cli-not-integrations', ['integrations'], 'the CLI runs without any SDK installed'),
  {
    name: 'agent-words-stand-alone',
    comment: "lib/agent/'s own files (but the two entries) are the words every room speaks: they use no room",
    severity: 'error',
    from: { path: '^lib/agent/[^/]+\\.ts$', pathNot: `^lib/agent/(${AGENT_ENTRIES.join('|')})\\.ts$` },
    to: { path: '^lib/agent/[^/]+/' },
  },
  {
    name: 'agent-rooms-under-entries',
    comment: 'AgentWithStateMachine and StepMirror stand on the rooms; no room imports them',
    severity: 'error',
    from: { path: '^lib/agent/[^/]+/' },
    to: { path: `^lib/agent/(${AGENT_ENTRIES.join('|')})\\.ts$` },
  },
  {
    name: 'agent-entries-apart',
    comment: "each entry stands on its own driver: the adapter's never loads the mirror, nor the mirror's the adapter",
    severity: 'error',
    from: { path: '^lib/agent/AgentWithStateMachine\\.ts$' },
    to: { path: '^lib/agent/(mirror/|StepMirror\\.ts$)' },
  },
  {
    name: 'agent-entries-apart-mirror',
    comment: "each entry stands on its own driver: the adapter's never loads the mirror, nor the mirror's the adapter",
    severity: 'error',
    from: { path: '^lib/agent/StepMirror\\.ts$' },
    to: { path: '^lib/agent/(adapter/|AgentWithStateMachine\\.ts$)' },
  },
  agentRoom('money', [], 'money (budgets, the meter, prices) stands on the words alone'),
  agentRoom('options', [], "the drivers' option checks stand on the words alone"),
  agentRoom('journal', ['money'], 'the journal keeps what money says of a call, and knows no turn'),
  agentRoom('retry', ['options'], 'a retry plan knows no money, journal or turn'),
  agentRoom('stall', ['journal', 'money'], 'the stall detectors read journal lines, and know no turn'),
  agentRoom('turn', BELOW_TURN, 'the turn core both drivers share knows no call, ending or driver'),
  agentRoom('calls', ['turn', ...BELOW_TURN], 'an LLM call or tool round knows no ending or driver'),
  agentRoom('endings', ['calls', 'turn', ...BELOW_TURN], 'the budget endings serve both drivers and know neither'),
  agentRoom(
    'adapter',
    ['endings', 'calls', 'turn', ...BELOW_TURN],
    'the driver that calls a loop never uses the mirror',
  ),
  agentRoom(
    'mirror',
    ['endings', 'calls', 'turn', ...BELOW_TURN],
    'the driver that hears a framework never uses the adapter',
  ),
  batchRoom(
    'keeping',
    [],
    'where a batch keeps its runs (a folder, a store, the files beside them) imports no other room',
  ),
  batchRoom('resume', ['keeping'], "a resume reads what was kept, and knows no task's run"),
  batchRoom('tasks', ['keeping'], "one task's run knows no scheduler, resume or approval"),
  batchRoom('raises', ['keeping'], 'a paused cap and its raises know no task or approval'),
  batchRoom('reading', ['keeping', 'raises'], 'a kept batch read back (watch, inspect, report, diff) never runs one'),
  batchRoom('approvals', ['keeping', 'tasks', 'reading'], 'parked runs and their answers are below the scheduler'),
  {
    name: 'states-stand-alone',
    comment: 'states/ is the top layer: it may not import lib/',
    severity: 'error',
    from: { path: '^states/' },
    to: { path: '^lib/' },
  },
  {
    name: 'main-entry-loads-no-integration',
    comment: 'a user who never installs an SDK never loads one, whichever entry they import',
    severity: 'error',
    from: { path: '^lib/(index|subpaths/[^/]+)\\.ts$' },
    to: { path: '^lib/(integrations|cli)/' },
  },
  {
    name: 'entries-are-for-users',
    comment: 'the library reaches its own code by file; only the integrations import an entry (by name)',
    severity: 'error',
    from: { path: '^(lib|states)/', pathNot: '^lib/(integrations/|index\\.ts$|subpaths/)' },
    to: { path: '^lib/(index\\.ts$|subpaths/)' },
  },
  {
    name: 'integrations-use-the-public-api',
    comment: 'integrations import the entries (and pure helpers in internal/), nothing private',
    severity: 'error',
    from: { path: '^lib/integrations/' },
    to: { path: '^(lib/(machine|agent|observe|batch|history|replay|report|telemetry|cli)/|states/)' },
  },
  {
    name: 'integrations-are-leaves',
    comment: 'one integration never loads another',
    severity: 'error',
    from: { path: '^lib/integrations/([^/]+)/' },
    to: { path: '^lib/integrations/', pathNot: '^lib/integrations/$1/' },
  },
];

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden,
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
    },
  },
};
