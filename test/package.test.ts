import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import * as api from '../lib/index';
import * as batch from '../lib/subpaths/batch';
import * as history from '../lib/subpaths/history';
import * as internal from '../lib/subpaths/internal';
import * as replay from '../lib/subpaths/replay';
import * as report from '../lib/subpaths/report';
import { copyPackageDist } from './helpers/packageBuild';

const root = path.resolve(__dirname, '..');
const run = (file: string, args: string[]) =>
  execFileSync(file, args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

// Builds once (or takes the build of these sources an earlier test made), then uses the package by its name (Node's self-reference through `exports`),
// exactly as `import` and `require` users would.
describe('the built package', () => {
  beforeAll(() => copyPackageDist(path.join(root, 'dist')), 420_000);

  const names = Object.keys(api).sort();

  it('exports every public name to require()', () => {
    const out = run(process.execPath, [
      '-e',
      "console.log(JSON.stringify(Object.keys(require('agent-state-machine')).sort()))",
    ]);
    expect(JSON.parse(out)).toEqual(names);
  });

  it('exports every public name to import, and works', () => {
    const script = [
      "import * as m from 'agent-state-machine';",
      'const sm = new m.StateMachine({ logger: false });',
      "sm.transition('WaitingForUserInput', 'esm');",
      'console.log(JSON.stringify({ names: Object.keys(m).sort(), current: sm.current }));',
    ].join('\n');
    const out = JSON.parse(run(process.execPath, ['--input-type=module', '-e', script]));
    expect(out).toEqual({ names, current: 'WaitingForUserInput' });
  });

  // The library's own subpaths come from the same build as the main entry, sharing its chunks: a
  // class reached from two entries is one class (an error a subpath throws is the main entry's).
  const CORE: Record<string, string[]> = {
    history: Object.keys(history).sort(),
    replay: Object.keys(replay).sort(),
    batch: Object.keys(batch).sort(),
    report: Object.keys(report).sort(),
    internal: Object.keys(internal).sort(),
  };
  const coreScript = (load: string[]) =>
    [
      ...load,
      'const names = { history: h, replay: rp, batch: b, report: r, internal: i };',
      'for (const k of Object.keys(names)) names[k] = Object.keys(names[k]).sort();',
      'let invalid = false; try { h.validateHistory(5); } catch (e) { invalid = e instanceof m.InvalidArgumentError; }',
      "r.buildHtmlReport('no-such-file.jsonl').then(",
      '  () => console.log(JSON.stringify({ names, invalid, shared: false })),',
      '  (e) => console.log(JSON.stringify({ names, invalid, shared: e instanceof h.HistoryFileError })),',
      ');',
    ].join('\n');

  it('serves the library subpaths to require(), sharing one copy of their classes with the main entry', () => {
    const script = coreScript([
      "const m = require('agent-state-machine');",
      "const h = require('agent-state-machine/history');",
      "const rp = require('agent-state-machine/replay');",
      "const b = require('agent-state-machine/batch');",
      "const r = require('agent-state-machine/report');",
      "const i = require('agent-state-machine/internal');",
    ]);
    expect(JSON.parse(run(process.execPath, ['-e', script]))).toEqual({ names: CORE, invalid: true, shared: true });
  });

  it('serves the library subpaths to import, sharing one copy of their classes with the main entry', () => {
    const script = coreScript([
      "import * as m from 'agent-state-machine';",
      "import * as h from 'agent-state-machine/history';",
      "import * as rp from 'agent-state-machine/replay';",
      "import * as b from 'agent-state-machine/batch';",
      "import * as r from 'agent-state-machine/report';",
      "import * as i from 'agent-state-machine/internal';",
    ]);
    const out = run(process.execPath, ['--input-type=module', '-e', script]);
    expect(JSON.parse(out)).toEqual({ names: CORE, invalid: true, shared: true });
  });

  // tsup makes the CommonJS chunks by rewriting the ESM ones, which renamed classes
  // (BudgetExceededError became `_class4`) until keepNames (tsup.config.ts).
  it.each([
    ['require', 'cjs'],
    ['import', 'esm'],
  ])('keeps the own name of every class and function the entries export (%s)', (_kind, format) => {
    const entries = ['agent-state-machine', ...Object.keys(CORE).map((s) => `agent-state-machine/${s}`)];
    const load = entries.map((e, i) =>
      format === 'cjs' ? `const m${i} = require('${e}');` : `import * as m${i} from '${e}';`,
    );
    const script = [
      ...load,
      `const modules = [${entries.map((_, i) => `m${i}`).join(', ')}];`,
      "const renamed = modules.flatMap((m) => Object.entries(m).filter(([k, v]) => typeof v === 'function' && v.name !== k).map(([k, v]) => `${k}: ${v.name}`));",
      'console.log(JSON.stringify(renamed));',
    ].join('\n');
    const out = run(process.execPath, [...(format === 'esm' ? ['--input-type=module'] : []), '-e', script]);
    expect(JSON.parse(out)).toEqual([]);
  });

  it('loads no SDK with any library subpath', () => {
    const script = [
      "for (const s of ['history', 'replay', 'batch', 'report', 'internal']) require('agent-state-machine/' + s);",
      'console.log(JSON.stringify(Object.keys(require.cache).filter((f) => /node_modules[\\/](openai|ai|@anthropic-ai|@pydantic|@openai|@langchain|@opentelemetry|@modelcontextprotocol|bullmq|ioredis|pg)[\\/]/.test(f))));',
    ].join('\n');
    expect(JSON.parse(run(process.execPath, ['-e', script]))).toEqual([]);
  });

  // The SDK subpaths load the main entry by its name: one copy of the library per process, so an
  // error an integration throws is the same class the main entry exports. Loading the main entry
  // alone loads no SDK and no price data.
  const SUBPATHS: Record<string, string[]> = {
    openai: [
      'OpenAIResponseError',
      'chatWire',
      'defineTool',
      'fromOpenAIChat',
      'fromOpenAIResponses',
      'mapOpenAIUsage',
      'mapResponsesUsage',
      'meteredFetch',
      'observeLoop',
      'observeTask',
      'observeTool',
      'responsesWire',
    ],
    anthropic: [
      'defineTool',
      'fromAnthropic',
      'mapAnthropicUsage',
      'messagesWire',
      'meteredFetch',
      'observeLoop',
      'observeTask',
      'observeTool',
    ],
    pricing: ['createPricing'],
  };

  it('serves each SDK subpath to require(), sharing one copy of the main entry', () => {
    const script = [
      "const main = require('agent-state-machine');",
      'const names = {};',
      `for (const sub of ${JSON.stringify(Object.keys(SUBPATHS))}) names[sub] = Object.keys(require('agent-state-machine/' + sub)).sort();`,
      'let same = false;',
      "try { require('agent-state-machine/openai').fromOpenAIChat({}, { model: 'm' }); } catch (e) { same = e instanceof main.InvalidArgumentError; }",
      // One observeLoop (and so one scope the metered fetch reads) whichever entry it comes from.
      "same = same && require('agent-state-machine/openai').observeLoop === main.observeLoop && require('agent-state-machine/anthropic').observeTool === main.observeTool;",
      'console.log(JSON.stringify({ names, same }));',
    ].join('\n');
    expect(JSON.parse(run(process.execPath, ['-e', script]))).toEqual({ names: SUBPATHS, same: true });
  });

  it('serves each SDK subpath to import, sharing one copy of the main entry', () => {
    const script = [
      "import * as main from 'agent-state-machine';",
      "import * as openai from 'agent-state-machine/openai';",
      "import * as anthropic from 'agent-state-machine/anthropic';",
      "import * as pricing from 'agent-state-machine/pricing';",
      'let same = false;',
      "try { anthropic.fromAnthropic({}, { model: 'm' }); } catch (e) { same = e instanceof main.InvalidArgumentError; }",
      'same = same && openai.observeLoop === main.observeLoop && anthropic.observeTool === main.observeTool;',
      'const names = { openai: Object.keys(openai).sort(), anthropic: Object.keys(anthropic).sort(), pricing: Object.keys(pricing).sort() };',
      "console.log(JSON.stringify({ names, same, price: pricing.createPricing()({ inputTokens: 1e6, outputTokens: 0 }, { model: 'gpt-4o-mini' }) }));",
    ].join('\n');
    expect(JSON.parse(run(process.execPath, ['--input-type=module', '-e', script]))).toEqual({
      names: SUBPATHS,
      same: true,
      price: 0.15,
    });
  });

  it('loads no SDK and no price data with the main entry alone', () => {
    const script =
      "require('agent-state-machine'); console.log(JSON.stringify(Object.keys(require.cache).filter((f) => /node_modules[\\/](openai|@anthropic-ai|@pydantic|@openai|@langchain)[\\/]/.test(f))));";
    expect(JSON.parse(run(process.execPath, ['-e', script]))).toEqual([]);
  });

  // winston and cli-progress are most of a cold start: loaded at their first use, in both builds.
  it.each([
    ['require', 'cjs'],
    ['import', 'esm'],
  ])('%s of the main entry loads neither winston nor cli-progress until a default logger is made', (_kind, format) => {
    const script = [
      format === 'cjs'
        ? "const m = require('agent-state-machine'); const { createRequire } = require('node:module');"
        : "import * as m from 'agent-state-machine'; import { createRequire } from 'node:module';",
      "const cache = () => Object.keys(createRequire(process.cwd() + '/x').cache);",
      'const loaded = () => ({ winston: cache().some((f) => /[\\/]winston[\\/]/.test(f)), progress: cache().some((f) => /[\\/]cli-progress[\\/]/.test(f)) });',
      'const before = loaded();',
      'const sm = new m.StateMachine();',
      "try { sm.transition('NoSuchState', 'test'); } catch {}",
      'console.log(JSON.stringify({ before, after: loaded() }));',
    ].join('\n');
    const result = execFileSync(
      process.execPath,
      [...(format === 'esm' ? ['--input-type=module'] : []), '-e', script],
      {
        cwd: root,
        encoding: 'utf8',
        env: { ...process.env, AGENT_SM_LOG_LEVEL: 'nonsense' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    expect(JSON.parse(result)).toEqual({
      before: { winston: false, progress: false },
      after: { winston: true, progress: false },
    });
  });

  // A batch's code is its own chunk, loaded at runBatch's first call with good tasks: it then runs a batch, and
  // its errors are the main entry's classes (one chunk graph, not a second copy).
  it.each([
    ['require', 'cjs'],
    ['import', 'esm'],
  ])('%s of the main entry loads the batch code at runBatch’s first call, and the batch runs', (_kind, format) => {
    const script = [
      format === 'cjs'
        ? "const m = require('agent-state-machine'); const { createRequire } = require('node:module');"
        : "import * as m from 'agent-state-machine'; import { createRequire } from 'node:module';",
      "const batchCode = () => Object.keys(createRequire(process.cwd() + '/x').cache).some((f) => /[\\/]scheduleBatch-[^\\/]*\\.cjs$/.test(f));",
      'const before = batchCode();',
      "const agent = () => m.createScriptedAgent({ replies: [{ text: 'done', usage: { inputTokens: 10, outputTokens: 2 } }] });",
      'let refused, badTask, afterBadTask;',
      "m.runBatch([{ id: 't', input: 'hi', agent }, { id: 't', input: 'again', agent }]).catch((e) => { badTask = e instanceof m.InvalidArgumentError; afterBadTask = batchCode(); })",
      "  .then(() => m.runBatch([{ id: 't', input: 'hi', agent }], { totals: {} })).catch((e) => { refused = e instanceof m.UnknownOptionError; })",
      "  .then(() => m.runBatch([{ id: 't', input: 'hi', agent }], { logger: false }))",
      '  .then((report) => console.log(JSON.stringify({ before, badTask, afterBadTask, after: batchCode(), refused, outcome: report.runs[0].outcome, calls: report.totals.llmCalls })));',
    ].join('\n');
    const out = run(process.execPath, [...(format === 'esm' ? ['--input-type=module'] : []), '-e', script]);
    // The ESM build's chunks are not in require's cache: there, only the batch's run is checked.
    // A bad task is refused before the batch code loads.
    expect(JSON.parse(out)).toEqual({
      before: false,
      badTask: true,
      afterBadTask: false,
      after: format === 'cjs',
      refused: true,
      outcome: 'end_of_turn',
      calls: 1,
    });
  });

  // The LangGraph subpath, both builds: a handler of the same @langchain/core the user has (so
  // LangChain takes it as a callback handler), sharing the main entry's classes.
  it.each([
    ['require', 'cjs'],
    ['import', 'esm'],
  ])('serves agent-state-machine/langgraph to %s, its handler a LangChain callback handler', (_kind, format) => {
    const load =
      format === 'cjs'
        ? [
            "const { LangGraphMirror, langGraphMirror } = require('agent-state-machine/langgraph');",
            "const main = require('agent-state-machine');",
            "const { BaseCallbackHandler } = require('@langchain/core/callbacks/base');",
          ]
        : [
            "import { LangGraphMirror, langGraphMirror } from 'agent-state-machine/langgraph';",
            "import * as main from 'agent-state-machine';",
            "import { BaseCallbackHandler } from '@langchain/core/callbacks/base';",
          ];
    const script = [
      ...load,
      'const lg = langGraphMirror({ logger: false });',
      'let invalid = false; try { langGraphMirror({ mirror: 1 }); } catch (e) { invalid = e instanceof main.InvalidArgumentError; }',
      'console.log(JSON.stringify({ handler: lg instanceof BaseCallbackHandler, mirror: lg.mirror instanceof main.StepMirror, invalid, cls: typeof LangGraphMirror }));',
    ].join('\n');
    const out = run(process.execPath, [...(format === 'esm' ? ['--input-type=module'] : []), '-e', script]);
    expect(JSON.parse(out)).toEqual({ handler: true, mirror: true, invalid: true, cls: 'function' });
  });

  it('exports the ai-sdk subpath to require() and import, and its loop runs a turn on the SDK mock model', () => {
    const required = run(process.execPath, [
      '-e',
      "console.log(JSON.stringify(Object.keys(require('agent-state-machine/ai-sdk')).sort()))",
    ]);
    expect(JSON.parse(required)).toEqual(['budgetFor', 'fromAISDK', 'mirrorAISDK', 'usageFromAISDK']);
    const script = [
      "import { AgentWithStateMachine } from 'agent-state-machine';",
      "import { fromAISDK } from 'agent-state-machine/ai-sdk';",
      "import { MockLanguageModelV3 } from 'ai/test';",
      'const usage = { inputTokens: { total: 3, noCache: 3 }, outputTokens: { total: 2, text: 2 } };',
      "const model = new MockLanguageModelV3({ doGenerate: { content: [{ type: 'text', text: 'hi' }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] } });",
      'const result = await new AgentWithStateMachine(fromAISDK({ model }), { logger: false }).runTurn("hello");',
      'console.log(JSON.stringify({ outcome: result.outcome, text: result.text }));',
    ].join('\n');
    expect(JSON.parse(run(process.execPath, ['--input-type=module', '-e', script]))).toEqual({
      outcome: 'end_of_turn',
      text: 'hi',
    });
  });

  it('never loads the ai package from the main entry', () => {
    const out = run(process.execPath, [
      '-e',
      "require('agent-state-machine'); console.log(Object.keys(require.cache).some((f) => /node_modules[\\\\/]ai[\\\\/]/.test(f)))",
    ]);
    expect(out.trim()).toBe('false');
  });

  it('serves agent-state-machine/otel to require() and import, and the main entry never loads OpenTelemetry', () => {
    const cjs = [
      "const m = require('agent-state-machine');",
      "const loaded = Object.keys(require.cache).some((k) => k.includes('@opentelemetry'));",
      "const otel = require('agent-state-machine/otel');",
      "const { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } = require('@opentelemetry/sdk-trace-base');",
      'const exporter = new InMemorySpanExporter();',
      'const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });',
      "const agent = new m.AgentWithStateMachine(m.createScriptedAgent({ replies: [{ text: 'hi' }] }), { logger: false });",
      "otel.traceAgent(agent, { tracer: provider.getTracer('t'), agentName: 'a' });",
      "agent.runTurn('hello').then(() => console.log(JSON.stringify({ loaded, names: Object.keys(otel).sort(), spans: exporter.getFinishedSpans().map((s) => s.name).sort() })));",
    ].join('\n');
    expect(JSON.parse(run(process.execPath, ['-e', cjs]))).toEqual({
      loaded: false,
      names: ['traceAgent', 'traceBatch'],
      spans: ['chat', 'invoke_agent a'],
    });
    const esm =
      "import * as otel from 'agent-state-machine/otel'; console.log(JSON.stringify(Object.keys(otel).sort()));";
    expect(JSON.parse(run(process.execPath, ['--input-type=module', '-e', esm]))).toEqual(['traceAgent', 'traceBatch']);
  });

  // 5.4 is the oldest TypeScript the published types support (they use `NoInfer`); the
  // README's Install section says so.
  it.each(['typescript', 'typescript-5.4'])(
    'gives both module kinds types that resolve under %s',
    (compiler) => {
      expect(() =>
        run(process.execPath, [
          path.join(root, 'node_modules', compiler, 'bin/tsc'),
          '-p',
          'test/fixtures/package/tsconfig.json',
        ]),
      ).not.toThrow();
    },
    60_000,
  );

  // The ai-sdk subpath needs what `ai` 6's own types need: TypeScript 5.7 or later (a generic
  // Uint8Array) and @types/json-schema under skipLibCheck: false.
  it('gives the ai-sdk subpath types that resolve for both module kinds under typescript', () => {
    expect(() =>
      run(process.execPath, [
        path.join(root, 'node_modules/typescript/bin/tsc'),
        '-p',
        'test/fixtures/package/tsconfig.ai-sdk.json',
      ]),
    ).not.toThrow();
  }, 60_000);

  // A module hook that makes any ESM import of `ai` throw.
  const noAiHook = `data:text/javascript,${encodeURIComponent(
    `import { register } from 'node:module'; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent("export async function resolve(s, c, next) { if (s === 'ai' || s.startsWith('ai/')) throw new Error('the ai package was loaded'); return next(s, c); }")}`)});`,
  )}`;

  // Both builds of agent-state-machine/mcp, each against the real MCP server of the tests
  // (test/fixtures/mcp/server.ts as a child process): it lists the tools, runs one, and never
  // loads `ai`; the main entry never loads the MCP SDK.
  it.each([
    ['require', 'cjs'],
    ['import', 'esm'],
  ])(
    'serves agent-state-machine/mcp to %s, working against a real MCP server without loading ai',
    (_kind, format) => {
      const load =
        format === 'cjs'
          ? [
              "const { mcpTools, McpToolError } = require('agent-state-machine/mcp');",
              "const main = require('agent-state-machine');",
              "const { Client } = require('@modelcontextprotocol/sdk/client/index.js');",
              "const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');",
              'const loaded = () => Object.keys(require.cache);',
            ]
          : [
              "import { mcpTools, McpToolError } from 'agent-state-machine/mcp';",
              "import * as main from 'agent-state-machine';",
              "import { Client } from '@modelcontextprotocol/sdk/client/index.js';",
              "import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';",
              // ESM has no require.cache: the resolve hook below fails any import of `ai` instead.
              'const loaded = () => [];',
            ];
      const script = [
        ...load,
        '(async () => {',
        "  const transport = new StdioClientTransport({ command: process.execPath, args: ['--import', 'tsx', 'test/fixtures/mcp/server.ts'], stderr: 'ignore' });",
        "  const client = new Client({ name: 'package-test', version: '1.0.0' });",
        '  await client.connect(transport);',
        '  const mcp = await mcpTools(client);',
        "  const result = await mcp.runTool({ id: 'c1', name: 'notes_read', input: { name: 'x' } }, { signal: new AbortController().signal, turn: 1 });",
        '  let invalid = false; try { await mcpTools({}); } catch (e) { invalid = e instanceof main.InvalidArgumentError; }',
        '  await client.close();',
        '  const ai = loaded().some((f) => /node_modules[\\\\/]ai[\\\\/]/.test(f));',
        '  console.log(JSON.stringify({ tools: Object.keys(mcp.tools).length, result, invalid, error: typeof McpToolError, ai }));',
        '})();',
      ].join('\n');
      const out = run(process.execPath, [
        ...(format === 'esm' ? ['--import', noAiHook, '--input-type=module'] : []),
        '-e',
        script,
      ]);
      expect(JSON.parse(out)).toEqual({
        tools: 8,
        result: { callId: 'c1', output: 'note x: buy milk' },
        invalid: true,
        error: 'function',
        ai: false,
      });
    },
    60_000,
  );

  it('never loads the MCP SDK from the main entry', () => {
    const out = run(process.execPath, [
      '-e',
      "require('agent-state-machine'); console.log(Object.keys(require.cache).some((f) => f.includes('@modelcontextprotocol')))",
    ]);
    expect(out.trim()).toBe('false');
  });

  // The MCP SDK's types need TypeScript 5.4 or later, as ours do; see tsconfig.mcp-cjs.json for
  // why the CommonJS consumer is checked with skipLibCheck.
  it.each([
    ['typescript', 'tsconfig.mcp.json'],
    ['typescript', 'tsconfig.mcp-cjs.json'],
    ['typescript-5.4', 'tsconfig.mcp.json'],
    ['typescript-5.4', 'tsconfig.mcp-cjs.json'],
  ])(
    'gives the mcp subpath types that resolve under %s (%s)',
    (compiler, config) => {
      expect(() =>
        run(process.execPath, [
          path.join(root, 'node_modules', compiler, 'bin/tsc'),
          '-p',
          `test/fixtures/package/${config}`,
        ]),
      ).not.toThrow();
    },
    60_000,
  );

  it('serves agent-state-machine/bullmq to import and require, loading the main entry once', () => {
    const names = [
      'RedisBudget',
      'RedisUnreachableError',
      'TakenOverError',
      'WorkerLostError',
      'answerBatchApproval',
      'attachBatch',
      'raiseBatch',
      'readBatchApprovals',
      'startBatchWorker',
      'submitBatch',
    ];
    const required = run(process.execPath, [
      '-e',
      "const b = require('agent-state-machine/bullmq'); const m = require('agent-state-machine'); console.log(JSON.stringify({ names: Object.keys(b).sort(), same: new b.WorkerLostError('w', 1) instanceof Error && typeof m.runBatch === 'function' }))",
    ]);
    expect(JSON.parse(required)).toEqual({ names, same: true });
    const imported = run(process.execPath, [
      '--input-type=module',
      '-e',
      "import * as b from 'agent-state-machine/bullmq'; console.log(JSON.stringify(Object.keys(b).sort()))",
    ]);
    expect(JSON.parse(imported)).toEqual(names);
  });

  it('serves agent-state-machine/postgres to import and require, sharing the main entry, which never loads pg', () => {
    const names = ['PostgresStore', 'PostgresUnreachableError'];
    const required = run(process.execPath, [
      '-e',
      "const p = require('agent-state-machine/postgres'); const m = require('agent-state-machine'); let same = false; try { new p.PostgresStore('mysql://x'); } catch (e) { same = e instanceof m.InvalidArgumentError; } console.log(JSON.stringify({ names: Object.keys(p).sort(), same }))",
    ]);
    expect(JSON.parse(required)).toEqual({ names, same: true });
    const imported = run(process.execPath, [
      '--input-type=module',
      '-e',
      "import * as p from 'agent-state-machine/postgres'; import * as m from 'agent-state-machine'; let same = false; try { new p.PostgresStore('mysql://x'); } catch (e) { same = e instanceof m.InvalidArgumentError; } console.log(JSON.stringify({ names: Object.keys(p).sort(), same }))",
    ]);
    expect(JSON.parse(imported)).toEqual({ names, same: true });
    const alone = run(process.execPath, [
      '-e',
      "require('agent-state-machine'); console.log(JSON.stringify(Object.keys(require.cache).filter((f) => /node_modules[\\/]pg[\\/]/.test(f))))",
    ]);
    expect(JSON.parse(alone)).toEqual([]);
  });

  // The split CommonJS chunks are the ESM ones rewritten by sucrase, which would turn each `?.`
  // and `??` into a helper called with closures, on every move (tsup.config.ts has esbuild lower them first).
  it('keeps optional chaining and nullish coalescing inline in the CommonJS build', () => {
    const helpers = fs
      .readdirSync(path.join(root, 'dist'), { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.cjs'))
      .filter((f) => /\b_(optionalChain|nullishCoalesce)\(/.test(fs.readFileSync(path.join(root, 'dist', f), 'utf8')));
    expect(helpers).toEqual([]);
  });

  it('ships no files it does not use', () => {
    const packed = JSON.parse(run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'])) as {
      files: { path: string }[];
    }[];
    const files = packed[0]!.files.map((f) => f.path).sort();
    expect(files).toContain('LICENSE');
    expect(files).toContain('dist/cli.cjs');
    expect(files.filter((f) => /^dist\/cli\.(mjs|d\.ts|d\.mts)$/.test(f))).toEqual([]);
  });
});
