import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  AgentWithStateMachine,
  APPROVAL_EXTENSION,
  COMPACTION_EXTENSION,
  createScriptedAgent,
  DEFAULT_TABLE,
  extendTable,
  InvalidTableError,
  runBatch,
  STALL_EXTENSION,
  WRAP_UP_EXTENSION,
  type Pricing,
  type ScriptedReply,
} from '../../lib/index';
import { JsonlHistorySink, loadHistory } from '../../lib/subpaths/history';
import { tableForOptions } from '../../lib/agent/endings/requiredEdges';
import { tableStates } from '../../lib/machine/TransitionTable';
import { manualClock } from '../helpers/manualClock';
import { runCli } from '../helpers/runCli';

const pricing: Pricing = (u) => (u.inputTokens ?? 0) * 1e-6 + (u.outputTokens ?? 0) * 4e-6;
const bound = { inputTokens: 1000, maxOutputTokens: 1000, model: 'm' };
const sameRead = (i: number): ScriptedReply => ({ toolCalls: [{ id: `c${i}`, name: 'read', input: { path: 'a' } }] });
const readLoop = () =>
  Object.assign(
    createScriptedAgent({ replies: [1, 2, 3, 4, 5].map(sameRead), tools: { read: { output: 'same as before' } } }),
    { compact: () => Promise.resolve({ messages: [] }), compactCalls: 'none' as const },
  );

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-states-'));
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('options that need states bring them', () => {
  it('stall: true with no table runs, ends stalled, and its history file declares the table it ran (agent-sm inspect reads it)', async () => {
    const file = path.join(dir, 'run.jsonl');
    const sink = JsonlHistorySink.open(file, { runId: 'stalls' });
    const agent = new AgentWithStateMachine(readLoop(), {
      stall: { policy: 'stop' },
      logger: false,
      clock: manualClock().now,
      sink,
    });
    const result = await agent.runTurn('read a');
    expect(result.outcome).toBe('stalled');
    expect(agent.machine.current).toBe('StallStopped');
    sink.close();
    const loaded = await loadHistory(file);
    expect(tableStates(loaded.table!)).toEqual(expect.arrayContaining(['Stalled', 'StallStopped']));
    expect(loaded.records.map((r) => r.to)).toContain('StallStopped');
    const { code, stdout, stderr } = await runCli('inspect', file);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toMatch(/StallStopped/);
    expect((await runCli('validate', file)).code).toBe(0);
  });

  it('tableForOptions() extends DEFAULT_TABLE with each extension the options need, once per combination', () => {
    expect(tableForOptions({ approval: false, timeout: false })).toBe(DEFAULT_TABLE);
    const all = tableForOptions({
      approval: true,
      timeout: true,
      compaction: true,
      stall: true,
      wrapUp: 'budget.wrapUp',
    });
    expect(all).toBe(tableForOptions({ approval: true, timeout: false, compaction: true, stall: true, wrapUp: 'x' }));
    const expected = [APPROVAL_EXTENSION, COMPACTION_EXTENSION, STALL_EXTENSION, WRAP_UP_EXTENSION].reduce<
      ReturnType<typeof extendTable<string, string>>
    >((t, e) => extendTable(t, e), DEFAULT_TABLE);
    expect(tableStates(all)).toEqual(tableStates(expected));
  });

  it('new AgentWithStateMachine() with approve, compact, stall or a wrapUp and no table runs a table with their states', () => {
    const make = (options: object) =>
      tableStates(new AgentWithStateMachine(readLoop(), { logger: false, ...options }).machine.table);
    expect(make({ approve: { read: true } })).toEqual(expect.arrayContaining(['AwaitingApproval', 'ApprovalTimedOut']));
    expect(make({ compact: true })).toContain('Compacting');
    expect(make({ stall: true })).toEqual(expect.arrayContaining(['Stalled', 'StallStopped']));
    const wraps = createScriptedAgent({ replies: [], bound });
    expect(
      tableStates(
        new AgentWithStateMachine(wraps, { logger: false, pricing, budget: { maxCostUsd: 1, wrapUp: true } }).machine
          .table,
      ),
    ).toContain('WrappingUp');
    expect(make({})).toEqual(tableStates(DEFAULT_TABLE));
  });

  it('new AgentWithStateMachine() refuses a given table without the extension, naming the constant and how to add it', () => {
    const make = (options: object) => () => new AgentWithStateMachine(readLoop(), { logger: false, ...options });
    expect(make({ table: DEFAULT_TABLE, stall: true })).toThrow(
      /^`stall` needs the states and edges of STALL_EXTENSION, which `table` lacks \(ProcessingLLMResponse → Stalled, Stalled → ToolUseRequested, Stalled → StallStopped, StallStopped → WaitingForUserInput\): pass table: extendTable\(yourTable, STALL_EXTENSION\), or leave `table` out/,
    );
    let error: unknown;
    try {
      make({
        table: extendTable(DEFAULT_TABLE, STALL_EXTENSION),
        stall: true,
        compact: true,
        approve: { read: true },
      })();
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InvalidTableError);
    expect((error as Error).message).toMatch(
      /^`approve` needs the states and edges of APPROVAL_EXTENSION, which `table` lacks \(CheckingForCancellation → AwaitingApproval, .*\); `compact` needs the states and edges of COMPACTION_EXTENSION, which `table` lacks \(.*\): pass table: extendTable\(extendTable\(yourTable, APPROVAL_EXTENSION\), COMPACTION_EXTENSION\), or leave `table` out/,
    );
    expect((error as InvalidTableError).issues[0]).toEqual({
      code: 'missing_edge',
      from: 'CheckingForCancellation',
      to: 'AwaitingApproval',
      extension: 'APPROVAL_EXTENSION',
      message:
        '`approve` needs the edge CheckingForCancellation → AwaitingApproval, of APPROVAL_EXTENSION, which the table lacks',
    });
    const wraps = createScriptedAgent({ replies: [], bound });
    expect(
      () =>
        new AgentWithStateMachine(wraps, {
          logger: false,
          pricing,
          table: DEFAULT_TABLE,
          budget: { maxCostUsd: 1, wrapUp: true },
        }),
    ).toThrow(
      /^`budget\.wrapUp` needs the states and edges of WRAP_UP_EXTENSION, which `table` lacks \(SendingToLLM → WrappingUp, .*\): pass table: extendTable\(yourTable, WRAP_UP_EXTENSION\), or leave `table` out/,
    );
  });

  it(".setBudget() with a wrapUp the adapter's own table lacks says to give it when the adapter is made", () => {
    const adapter = new AgentWithStateMachine(createScriptedAgent({ replies: [], bound }), { logger: false, pricing });
    expect(() => adapter.setBudget({ maxCostUsd: 1, wrapUp: true })).toThrow(
      /^`budget\.wrapUp` needs the states and edges of WRAP_UP_EXTENSION, which this adapter's table lacks \(.*\): the adapter extends DEFAULT_TABLE with what the options it is made with need, so give `budget\.wrapUp` to new AgentWithStateMachine\(\), or pass table: extendTable\(DEFAULT_TABLE, WRAP_UP_EXTENSION\)/,
    );
  });

  it('runBatch() with total.wrapUp and no table: each run can wrap up, its file declaring WrappingUp', async () => {
    const round: ScriptedReply = {
      toolCalls: [{ id: 'c1', name: 'look' }],
      model: 'm',
      usage: { inputTokens: 1000, outputTokens: 1000 },
    };
    const report = await runBatch(
      [
        {
          id: 'a',
          input: 'go',
          agent: () =>
            createScriptedAgent({
              replies: Array.from({ length: 20 }, () => round),
              finalReply: { text: 'answer', model: 'm', usage: { inputTokens: 1000, outputTokens: 100 } },
              bound,
              tools: { look: { output: 'seen' } },
            }),
        },
      ],
      {
        logger: false,
        pricing,
        historyDir: dir,
        minOutputTokens: 1000,
        clock: manualClock().now,
        total: { maxCostUsd: 0.02, wrapUp: true },
      },
    );
    expect(report.runs[0]!.outcome).toBe('wrapped_up');
    const file = fs.readdirSync(dir).find((f) => f.startsWith('a') && f.endsWith('.jsonl'))!;
    expect(tableStates((await loadHistory(path.join(dir, file))).table!)).toContain('WrappingUp');
  });
});
