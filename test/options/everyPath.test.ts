import fc from 'fast-check';
import { AgentWithStateMachine } from '../../lib/agent/AgentWithStateMachine';
import { createScriptedAgent } from '../../lib/agent/createScriptedAgent';
import { MIRROR_CANNOT } from '../../lib/agent/options/optionKeys';
import { PRICING_EXPECTED } from '../../lib/agent/options/assertPricing';
import { StepMirror } from '../../lib/agent/StepMirror';
import { runBatch } from '../../lib/batch/runBatch';
import { runTask } from '../../lib/batch/tasks/runTask';
import { resumeAwaitingApproval } from '../../lib/replay/resumeAwaitingApproval';
import { nearestName } from '../../lib/internal/nearestName';
import { declaredOptions, refusedOn, type OptionEntry } from '../../lib/internal/optionTable';
import { InvalidArgumentError } from '../../lib/machine/InvalidArgumentError';
import { UnknownOptionError } from '../../lib/machine/UnknownOptionError';
import { mirrorAISDK } from '../../lib/integrations/ai-sdk/mirrorAISDK';
import { LangGraphMirror } from '../../lib/integrations/langgraph/LangGraphMirror';
import { startBatchWorker } from '../../lib/integrations/bullmq/startBatchWorker';
import { submitBatch } from '../../lib/integrations/bullmq/submitBatch';
import { attachBatch } from '../../lib/integrations/bullmq/attachBatch';
import { raiseBatch } from '../../lib/integrations/bullmq/raiseBatch';
import { readBatchApprovals } from '../../lib/integrations/bullmq/readBatchApprovals';
import { answerBatchApproval } from '../../lib/integrations/bullmq/answerBatchApproval';

// Every entry point that takes options, each with a misspelt key: refused with the key, where it
// was given and the nearest known name, before anything runs. A dropped key would leave a batch
// meant to be capped with no cap.

const loop = () => createScriptedAgent({ replies: [{ text: 'done' }] });
const NOWHERE = 'redis://127.0.0.1:1'; // never reached: the options are refused first
const frameworkTask = {
  id: 'fw',
  drive: async (mirror: StepMirror) => {
    await mirror.modelCallStart();
    mirror.modelResponse({ text: 'hi', usage: { inputTokens: 1, outputTokens: 1, costUsd: 0 } });
  },
};

type Entry = [where: string, call: (options: Record<string, unknown>) => unknown];

const entries: Entry[] = [
  ['new AgentWithStateMachine()', (o) => new AgentWithStateMachine(loop(), o)],
  ['runTurn()', (o) => new AgentWithStateMachine(loop(), { logger: false }).runTurn('hi', o)],
  ['new StepMirror()', (o) => new StepMirror(o)],
  ['mirrorAISDK()', (o) => mirrorAISDK(o)],
  ['new LangGraphMirror()', (o) => new LangGraphMirror(o)],
  ['runBatch()', (o) => runBatch([], o)],
  ['startBatchWorker()', (o) => startBatchWorker({ connection: NOWHERE, name: 'q', agent: loop, ...o })],
  ['submitBatch()', (o) => submitBatch([], { connection: NOWHERE, name: 'q', ...o })],
  ['attachBatch()', (o) => attachBatch({ connection: NOWHERE, name: 'q', batchId: 'b', ...o })],
  ['raiseBatch()', (o) => raiseBatch({ connection: NOWHERE, batchId: 'b', maxCostUsd: 1, ...o })],
  ['readBatchApprovals()', (o) => readBatchApprovals({ connection: NOWHERE, batchId: 'b', ...o })],
  [
    'answerBatchApproval()',
    (o) => answerBatchApproval({ connection: NOWHERE, batchId: 'b', run: 'r', approved: true, ...o }),
  ],
];

async function refusal(call: () => unknown): Promise<Error> {
  try {
    await call();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected the call to be refused');
}

describe('an unknown option is refused with the nearest known name, on every path', () => {
  it.each(entries)('%s', async (where, call) => {
    const error = await refusal(() => call({ logr: false }));
    expect(error).toBeInstanceOf(UnknownOptionError);
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect(error.message).toContain('`logr`');
    expect(error.message).toContain(where);
  });

  it.each([
    ['totals', 'total'],
    ['historydir', 'historyDir'],
    ['perrun', 'perRun'],
    ['concurency', 'concurrency'],
  ])('runBatch({ %s }) asks whether `%s` was meant, and runs nothing', async (slip, meant) => {
    let started = 0;
    const error = await refusal(() =>
      runBatch([{ id: 'a', input: 'x', agent: () => (started++, loop()) }], { [slip]: 1 }),
    );
    expect(error.message).toBe(`Unknown option \`${slip}\` of runBatch(); did you mean \`${meant}\`?`);
    expect(started).toBe(0);
  });

  it('names no suggestion when nothing is close', async () => {
    const error = await refusal(() => runBatch([], { completelyDifferent: 1 } as never));
    expect(error.message).toBe('Unknown option `completelyDifferent` of runBatch()');
  });
});

describe('every declared option, given where it is not taken, is refused by name (generated from the one declaration)', () => {
  // Each entry point of the declaration (lib/internal/optionTable.ts) and how it is called.
  const byEntry: Record<OptionEntry, Entry[1]> = {
    adapter: entries[0]![1],
    runTurn: entries[1]![1],
    mirror: entries[2]![1],
    batch: entries[5]![1],
    worker: entries[6]![1],
    submit: entries[7]![1],
    attach: entries[8]![1],
    raise: entries[9]![1],
    approvals: entries[10]![1],
    answer: entries[11]![1],
  };
  // The options the calls above give themselves (a worker's connection, …) are not given twice.
  const given = { given: true };

  it.each(Object.keys(byEntry) as OptionEntry[])('%s', async (entry) => {
    const refused = refusedOn(entry);
    let checked = 0;
    for (const [key, declared] of declaredOptions()) {
      if (declared.on.includes(entry)) continue;
      checked++;
      const error = await refusal(() => byEntry[entry]({ [key]: given }));
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect([key, (error as InvalidArgumentError).argument]).toEqual([key, key]);
      if (refused[key] === undefined) expect([key, error]).toEqual([key, expect.any(UnknownOptionError)]);
      else {
        expect([key, error]).not.toEqual([key, expect.any(UnknownOptionError)]);
        expect(error.message).toContain(refused[key]);
      }
    }
    expect(checked).toBeGreaterThan(5);
  });

  it('an entry point refuses only options it does not take', () => {
    for (const entry of Object.keys(byEntry) as OptionEntry[])
      for (const [key, declared] of declaredOptions())
        if (declared.refused?.[entry] !== undefined)
          expect({ entry, key, taken: declared.on.includes(entry) }).toEqual({ entry, key, taken: false });
  });
});

describe('a `pricing` that is not a function is refused with one wording, on every path that takes the function', () => {
  const unpriced = new Set([
    'runTurn()',
    'submitBatch()',
    'attachBatch()',
    'raiseBatch()',
    'readBatchApprovals()',
    'answerBatchApproval()',
  ]);
  const priced = entries.filter(([where]) => !unpriced.has(where));
  it.each([
    ...priced,
    [
      'resumeAwaitingApproval()',
      (o: Record<string, unknown>) => resumeAwaitingApproval({ records: [], journal: [] } as never, loop(), o),
    ] as Entry,
  ])('%s', async (_where, call) => {
    const error = await refusal(() => call({ pricing: { 'gpt-4o': 1 } }));
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect((error as InvalidArgumentError).argument).toBe('pricing');
    expect(error.message).toBe(`Expected \`pricing\` to be ${PRICING_EXPECTED}, got \`{"gpt-4o":1}\` (object)`);
  });
});

describe('an option a framework run cannot honour is refused by name, never dropped', () => {
  const cannot = Object.keys(MIRROR_CANNOT);
  // Each option as it is given; `budget.*` keys are keys of a budget.
  const sample: Record<string, Record<string, unknown>> = {
    'budget.wrapUp': { budget: { maxCostUsd: 1, wrapUp: true } },
    'budget.visible': { budget: { maxLlmCalls: 5, visible: true } },
  };
  for (const [key, value] of Object.entries({
    table: {},
    compact: true,
    retry: { retries: 1 },
    toolConcurrency: 4,
    minOutputTokens: 100,
    cancelGraceMs: 10,
    sleep: (): Promise<void> => Promise.resolve(),
    random: (): number => 0.5,
  }))
    sample[key] = { [key]: value };

  it('the sample covers every such option', () => {
    expect(Object.keys(sample).sort()).toEqual([...cannot].sort());
  });

  it.each(cannot)('new StepMirror({ %s }) says why', (key) => {
    const error = (() => {
      try {
        new StepMirror(sample[key] as never);
      } catch (e) {
        return e as InvalidArgumentError;
      }
      throw new Error('accepted');
    })();
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect(error.argument).toBe(key);
    expect(error.message).toContain(MIRROR_CANNOT[key as keyof typeof MIRROR_CANNOT]!);
  });

  // A budget's endings reach the framework: its integration refuses them (or makes them: mirrorAISDK).
  const adapterOnly = cannot.filter((key) => !key.startsWith('budget.'));
  it.each(adapterOnly)(
    'a framework task given adapter option %s ends in Error naming it, its framework never run',
    async (key) => {
      let ran = false;
      const run = await runTask(
        {
          id: 'fw',
          drive: () => {
            ran = true;
          },
        },
        { adapter: { logger: false, ...sample[key] } },
      );
      expect(ran).toBe(false);
      expect(run.outcome).toBe('error');
      expect(run.error?.message).toContain(`\`${key}\``);
      expect(run.error?.message).toContain('framework task `fw`');
    },
  );

  it('a framework task given resumeFrom with nothing to serve starts again, with what the cut-off attempt spent counted', async () => {
    const run = await runTask(frameworkTask, {
      adapter: { logger: false, resumeFrom: { journal: [], usage: { llmCalls: 2, costUsd: 0.5 } } },
    });
    expect(run.outcome).toBe('end_of_turn');
    expect(run.resume).toMatchObject({ mode: 'restarted', recordedCalls: 0 });
    expect(run.usage).toMatchObject({ llmCalls: 3, costUsd: 0.5 });
  });

  it.each([
    ['retry', { retry: { retries: 3 } }],
    ['toolConcurrency', { toolConcurrency: 2 }],
    ['compact', { compact: true }],
  ])('runBatch with a framework task refuses %s before any run starts', async (key, options) => {
    // `onApproval` alone is taken: a framework's own approvals (AI SDK needsApproval) reach it.
    let started = 0;
    const error = await refusal(() =>
      runBatch(
        [
          { id: 'agent-task', input: 'x', agent: () => (started++, loop()) },
          { id: 'fw', drive: () => void started++ },
        ],
        options as never,
      ),
    );
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect((error as InvalidArgumentError).argument).toBe(key);
    expect(error.message).toContain('framework task (`fw`)');
    expect(started).toBe(0);
  });

  it('runBatch takes `approve` with a framework task: a call it names that the framework runs without asking ends the run in Error, its tool not run', async () => {
    // A mirror driven by hand puts the policy on no tool: the response that calls it ends the run.
    let ran = 0;
    const task = {
      id: 'unasked',
      drive: async (mirror: StepMirror) => {
        await mirror.modelCallStart();
        mirror.modelResponse({
          toolCalls: [{ id: 'c1', name: 'delete_file', input: { path: '/' } }],
          usage: { inputTokens: 1, outputTokens: 1, costUsd: 0 },
        });
        const stop = await mirror.toolStart({ id: 'c1', name: 'delete_file', input: { path: '/' } });
        if (stop !== undefined) throw stop;
        ran++;
      },
    };
    const report = await runBatch([task, frameworkTask], {
      approve: { delete_file: true },
      onApproval: () => undefined,
      logger: false,
    });
    expect(ran).toBe(0);
    expect(report.runs.map((r) => r.outcome)).toEqual(['error', 'end_of_turn']);
    expect(report.runs[0]!.error?.message).toMatch(
      /`approve`.*names call c1 \(delete_file\), and tool delete_file reaches the framework without it.*mirrorAISDK\(\{ tools \}\)/,
    );
  });

  it('false counts as not given: runBatch({ compact: false, ledger: false }) runs framework tasks', async () => {
    const report = await runBatch([frameworkTask], { compact: false, ledger: false, logger: false });
    expect(report.runs[0]!.outcome).toBe('end_of_turn');
  });
});

describe('a mirror handed to an integration takes nothing beside it', () => {
  it('mirrorAISDK({ mirror, budget: { maxLlmCalls: 0 } }) is refused: the budget would go unused', () => {
    const mirror = new StepMirror({ logger: false });
    expect(() => mirrorAISDK({ mirror, budget: { maxLlmCalls: 0 } })).toThrow(
      /`budget`.*left out of mirrorAISDK\(\) when `mirror` is given/,
    );
  });

  it('new LangGraphMirror({ mirror, journal: true }) is refused the same way', () => {
    const mirror = new StepMirror({ logger: false });
    expect(() => new LangGraphMirror({ mirror, journal: true } as never)).toThrow(/`journal`.*new LangGraphMirror\(\)/);
  });

  it('an undefined option beside it is no option', () => {
    const mirror = new StepMirror({ logger: false });
    expect(mirrorAISDK({ mirror, budget: undefined }).mirror).toBe(mirror);
  });

  it('new StepMirror({ toolConcurrency: "bogus", retry: "bogus" }) is refused by name', () => {
    expect(() => new StepMirror({ toolConcurrency: 'bogus', retry: 'bogus' } as never)).toThrow(
      /`toolConcurrency`.*the framework runs the tool calls/,
    );
  });
});

describe('the distributed batch refuses what it cannot take, saying where it goes', () => {
  it('startBatchWorker({ table, onApproval }) is refused', () => {
    expect(() => startBatchWorker({ connection: NOWHERE, name: 'q', agent: loop, table: 'bogus' } as never)).toThrow(
      /`table`.*startBatchWorker\(\).*default table/,
    );
    expect(() =>
      startBatchWorker({ connection: NOWHERE, name: 'q', agent: loop, onApproval: () => undefined } as never),
    ).toThrow(/`onApproval`.*startBatchWorker\(\).*give it to submitBatch\(\) or attachBatch\(\)/);
  });

  it.each([
    // The batch's policy is stored in Redis for every worker: an object, never a function.
    [
      'approve',
      { approve: () => true },
      /`approve`.*stored in Redis for every worker to read, and a function cannot be/,
    ],
    ['journal', { journal: true }, /give it to startBatchWorker\(\)/],
    ['historyDir', { historyDir: 'runs' }, /give it to startBatchWorker\(\)/],
  ])('submitBatch({ %s }) is refused', async (_key, options, why) => {
    await expect(submitBatch([], { connection: NOWHERE, name: 'q', ...options } as never)).rejects.toThrow(why);
  });
});

describe('nearestName', () => {
  const names = ['concurrency', 'perRun', 'total', 'historyDir', 'journal', 'ledger', 'retry'];

  it('finds a name whatever its case', () => {
    fc.assert(
      fc.property(fc.constantFrom(...names), fc.array(fc.boolean(), { minLength: 12, maxLength: 12 }), (name, up) => {
        const cased = [...name].map((c, i) => (up[i] ? c.toUpperCase() : c.toLowerCase())).join('');
        expect(nearestName(cased, names)).toBe(name);
      }),
    );
  });

  it('finds a name after one slip (a letter dropped, added, changed or two swapped) in a name of 6 or more', () => {
    const long = names.filter((n) => n.length >= 6);
    fc.assert(
      fc.property(
        fc.constantFrom(...long),
        fc.nat(),
        fc.constantFrom('drop', 'add', 'change', 'swap'),
        (name, at, slip) => {
          const i = at % (name.length - 1);
          const broken =
            slip === 'drop'
              ? name.slice(0, i) + name.slice(i + 1)
              : slip === 'add'
                ? name.slice(0, i) + 'q' + name.slice(i)
                : slip === 'change'
                  ? name.slice(0, i) + (name[i] === 'q' ? 'z' : 'q') + name.slice(i + 1)
                  : name.slice(0, i) + name[i + 1]! + name[i]! + name.slice(i + 2);
          expect(nearestName(broken, names)).toBe(name);
        },
      ),
    );
  });

  it('suggests nothing for a word far from every name', () => {
    expect(nearestName('xyz', names)).toBeUndefined();
    expect(nearestName('maxCostUsd', names)).toBeUndefined();
  });
});

describe('ledger: false beside a journal cannot be honoured, and is refused on every path that takes both', () => {
  // The journal always writes the ledger's reserve lines: `ledger: false` there was once left
  // without effect, and a batch meant to skip the fsync before each call still paid for it.
  const sink = { write: () => undefined, journal: () => undefined };
  const paths: Array<[string, () => unknown]> = [
    ['new AgentWithStateMachine()', () => new AgentWithStateMachine(loop(), { sink, journal: true, ledger: false })],
    ['new StepMirror()', () => new StepMirror({ sink, journal: true, ledger: false })],
    ['mirrorAISDK()', () => mirrorAISDK({ sink, journal: true, ledger: false })],
    [
      'runBatch()',
      () => runBatch([{ id: 'a', input: 'go', agent: loop }], { historyDir: '/nonexistent/x', ledger: false }),
    ],
  ];
  it.each(paths)('%s', async (_where, call) => {
    const error = await refusal(call);
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect(error.message).toContain('Expected `ledger` to be left out or true while `journal` is on');
  });
  it('with the journal off, ledger: false is what it says', async () => {
    const report = await runBatch([{ id: 'a', input: 'go', agent: loop }], { logger: false, ledger: false });
    expect(report.runs[0]!.outcome).toBe('end_of_turn');
  });
});
