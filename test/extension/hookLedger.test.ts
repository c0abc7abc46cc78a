import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  AgentWithStateMachine,
  COMPACTION_EXTENSION,
  DEFAULT_TABLE,
  extendTable,
  type AgentLoop,
  type LLMCallBound,
  type Pricing,
} from '../../lib/index';
import { JsonlHistorySink, loadHistory, runFacts, validateHistory } from '../../lib/subpaths/history';
import { formatConversation } from '../../lib/history/formatConversation';
import { readRunFile } from '../../lib/history/readRunFile';

// A hook's LLM call through `ctx.llm` (a compaction that summarises, a tool that asks a model)
// is written to the money ledger as the loop's own calls are: a `reserve` line kept before the
// call starts, and a ledger-only `llm` line with what it cost after. A run cut off in the middle
// of such a call leaves its hold on record, so a resume counts it as spent.

const TABLE = extendTable(DEFAULT_TABLE, COMPACTION_EXTENSION);
const pricing: Pricing = (u) => (u.inputTokens ?? 0) * 1e-6 + (u.outputTokens ?? 0) * 4e-6;
const main: LLMCallBound = { inputTokens: 1000, maxOutputTokens: 500, model: 'm' };
const summary: LLMCallBound = { inputTokens: 2000, maxOutputTokens: 250, model: 'm' };

let dir: string;
beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-hookledger-'))));
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const lines = (file: string): Array<Record<string, unknown>> =>
  fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

const overflow = (): Error =>
  Object.assign(new Error("400 This model's maximum context length is 100 tokens."), {
    status: 400,
    code: 'context_length_exceeded',
  });

/**
 * A loop whose first call overflows the context; its `compact` summarises through `ctx.llm`
 * (`summarise` is the provider's answer), then the call goes again. A tool `ask` calls a model
 * through its own `ctx.llm`.
 */
function loopWith(
  summarise: (file: string) => Promise<{ usage: { inputTokens: number; outputTokens: number } }>,
  file: string,
): AgentLoop {
  let calls = 0;
  return {
    compactCalls: 'budgeted',
    llmCallBound: () => main,
    async sendUserMessage() {
      calls++;
      if (calls === 1) throw overflow();
      return {
        text: 'asking',
        toolCalls: [{ id: 'c1', name: 'ask', input: {} }],
        usage: { inputTokens: 900, outputTokens: 100 },
        model: 'm',
      };
    },
    sendToolResults: async () => ({ text: 'done', usage: { inputTokens: 950, outputTokens: 50 }, model: 'm' }),
    async runTool(call, ctx) {
      if (ctx.llm === undefined) throw new Error('the adapter gives every tool a budgeted handle');
      const answer = await ctx.llm.call({ inputTokens: 300, maxOutputTokens: 100, model: 'm' }, async () => ({
        usage: { inputTokens: 300, outputTokens: 40 },
        model: 'm',
      }));
      return { callId: call.id, output: String(answer.usage.outputTokens) };
    },
    async compact(_info, ctx) {
      await ctx.llm.call(summary, () => summarise(file));
      return { removedMessages: 2 };
    },
  };
}

function agentOn(loop: AgentLoop, file: string) {
  const sink = JsonlHistorySink.open(file, { runId: 'r', durability: 'turn' });
  const agent = new AgentWithStateMachine(loop, {
    sink,
    table: TABLE,
    compact: true,
    journal: true,
    logger: false,
    pricing,
  });
  return { agent, sink };
}

describe("a hook's LLM call is on the money ledger", () => {
  it('a reserve line is in the file when the call starts, and a ledger-only llm line closes it with its cost', async () => {
    const file = path.join(dir, 'run.jsonl');
    let seen: Array<Record<string, unknown>> = [];
    const loop = loopWith(async (f) => {
      seen = lines(f);
      return { usage: { inputTokens: 1800, outputTokens: 200 } };
    }, file);
    const { agent, sink } = agentOn(loop, file);
    expect((await agent.runTurn('go')).outcome).toBe('end_of_turn');
    sink.close();

    // $0.002 of input and $0.001 of output at most: the summary's worst case, kept before it ran.
    expect(seen.at(-1)).toMatchObject({
      type: 'reserve',
      turn: 1,
      operation: 'compact',
      attempt: 1,
      maxCostUsd: 0.003,
      bound: summary,
    });
    const history = await loadHistory(file);
    const hookLines = history.journal.filter((j) => j.operation === 'compact' || j.operation === 'runTool');
    expect(hookLines.map((j) => [j.type, j.operation, j.attempt])).toEqual([
      ['reserve', 'compact', 1],
      ['llm', 'compact', 1],
      ['reserve', 'runTool', 2],
      ['llm', 'runTool', 2],
    ]);
    expect(hookLines[1]).toMatchObject({
      ledgerOnly: true,
      costUsd: 0.0026,
      usage: { inputTokens: 1800, outputTokens: 200 },
    });
    expect(hookLines[3]).toMatchObject({ ledgerOnly: true, costUsd: expect.closeTo(0.00046, 12) });
    expect(hookLines.every((j) => j.type === 'reserve' || (j.input === undefined && j.response === undefined))).toBe(
      true,
    );
    expect(validateHistory(history.entries)).toMatchObject({ ok: true });
    // The ledger's rule over the file: every reservation closed, the hooks' calls counted.
    const spend = runFacts(history.entries).spend;
    expect(spend).toMatchObject({ openReservations: 0, ledger: true });
    expect(spend.costUsd).toBeCloseTo(agent.usage.costUsd!, 10);
    // The conversation shows the hooks' calls for what they are.
    const shown = formatConversation(history.entries);
    expect(shown).toContain('compact: LLM call 1, $0.0026');
    expect(shown).toContain('runTool: LLM call 2, $0.0005');
  });

  it('a run cut off in the middle of a summary leaves its hold counted as spent', async () => {
    const file = path.join(dir, 'run.jsonl');
    let reached!: () => void;
    const inSummary = new Promise<void>((r) => (reached = r));
    let answer!: (value: { usage: { inputTokens: number; outputTokens: number } }) => void;
    const loop = loopWith(() => {
      reached();
      return new Promise((r) => (answer = r));
    }, file);
    const { agent, sink } = agentOn(loop, file);
    const turn = agent.runTurn('go');
    await inSummary;
    // What a kill now leaves on disk: the reserve line was kept before the call started.
    const facts = await readRunFile(file, { salvage: true });
    // The summary's hold ($0.003; the overflowed attempt was refused by the provider, so it cost nothing).
    expect(facts.costUsd).toBeCloseTo(0.003, 10);
    answer({ usage: { inputTokens: 1800, outputTokens: 200 } });
    expect((await turn).outcome).toBe('end_of_turn');
    sink.close();
  });

  it('a reserve line the sink cannot keep stops the hook call before it leaves, and its hold goes back', async () => {
    let summaries = 0;
    const loop = loopWith(async () => {
      summaries++;
      return { usage: { inputTokens: 1, outputTokens: 1 } };
    }, '');
    const sink = {
      write: () => undefined,
      journal: (entry: { type: string; operation?: string }) => {
        if (entry.type === 'reserve' && entry.operation === 'compact') throw new Error('disk full');
      },
    };
    const agent = new AgentWithStateMachine(loop, {
      sink,
      table: TABLE,
      compact: true,
      journal: true,
      logger: false,
      pricing,
    });
    const result = await agent.runTurn('go');
    expect(summaries).toBe(0);
    expect(result.outcome).toBe('error');
    expect(result.error?.message).toMatch(/reserve line.*disk full/);
    // Nothing charged: the overflow was refused by the provider, and the summary's hold went back.
    expect(agent.usage.costUsd ?? 0).toBe(0);
  });
});
