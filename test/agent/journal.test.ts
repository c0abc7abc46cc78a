import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { AgentWithStateMachine } from '../../lib/agent/AgentWithStateMachine';
import { createScriptedAgent, type ScriptedReply } from '../../lib/agent/createScriptedAgent';
import type { JournalEntry } from '../../lib/agent/journal/JournalEntry';
import { redactCredentials } from '../../lib/agent/journal/redactCredentials';
import { runBatch } from '../../lib/batch/runBatch';
import { JsonlHistorySink } from '../../lib/history/JsonlHistorySink';
import { loadHistory } from '../../lib/history/loadHistory';
import { validateHistory } from '../../lib/history/validateHistory';
import { manualClock } from '../helpers/manualClock';

const instant = async (): Promise<void> => undefined;

let dir: string;
beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-journal-'))));
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Runs one turn of a scripted agent with the journal on, into a file; returns the file read back. */
async function journaled(
  replies: ScriptedReply[],
  options: {
    redact?: (e: JournalEntry) => JournalEntry;
    tools?: Parameters<typeof createScriptedAgent>[0]['tools'];
  } = {},
) {
  const file = path.join(dir, `run-${Math.random().toString(36).slice(2)}.jsonl`);
  const sink = JsonlHistorySink.open(file, { runId: 'r1' });
  const clock = manualClock();
  const agent = new AgentWithStateMachine(
    createScriptedAgent({ sleep: instant, replies, tools: options.tools ?? { bash: { output: 'ok' } } }),
    {
      sink,
      clock: clock.now,
      logger: false,
      sleep: instant,
      retry: { retries: 2, baseDelayMs: 1 },
      journal: options.redact === undefined ? true : { redact: options.redact },
    },
  );
  const result = await agent.runTurn('list the files');
  sink.close();
  return { result, history: await loadHistory(file) };
}

describe('the journal (AgentWithStateMachine journal option)', () => {
  it('writes every LLM attempt and tool call beside the moves, each before the move that follows it', async () => {
    const { result, history } = await journaled([
      { error: 'ECONNRESET' },
      {
        text: 'let me look',
        toolCalls: [{ id: 'c1', name: 'bash', input: { cmd: 'ls' } }],
        usage: { inputTokens: 10, outputTokens: 3, costUsd: 0.001 },
      },
      { text: 'two files', usage: { inputTokens: 20, outputTokens: 4, costUsd: 0.002 } },
    ]);
    expect(result.outcome).toBe('end_of_turn');
    // In file order: a move (m) or a journal line (llm/tool), with the seq it follows.
    const order = history.entries.flatMap((e) =>
      e.kind === 'record'
        ? [`m${e.record.seq}:${e.record.to}`]
        : e.kind === 'journal'
          ? [`${e.journal.type}@${e.journal.seq}`]
          : [],
    );
    expect(order).toEqual([
      'm1:WaitingForUserInput',
      'm2:SendingToLLM',
      'reserve@2', // the ledger's reservation, on the disk before the attempt starts
      'llm@2', // the failed attempt
      'reserve@2',
      'llm@2', // the retry that answered: written before ProcessingLLMResponse
      'm3:ProcessingLLMResponse',
      'm4:ToolUseRequested',
      'm5:CheckingForCancellation',
      'm6:RunningTool',
      'tool@6',
      'm7:CheckingGitCommits',
      'm8:CheckingBudget',
      'm9:GatheringAdditionalMessages',
      'm10:SendingToolResults',
      'reserve@10',
      'llm@10',
      'm11:ProcessingLLMResponse',
      'm12:EndOfTurn',
    ]);
    const [failed, answered, , last] = history.journal.filter((j) => j.type !== 'reserve');
    expect(failed).toMatchObject({
      type: 'llm',
      turn: 1,
      operation: 'sendUserMessage',
      attempt: 1,
      input: { kind: 'user_message', message: 'list the files' },
      error: { name: 'Error', message: 'ECONNRESET' },
    });
    expect(answered).toMatchObject({
      attempt: 2,
      response: {
        text: 'let me look',
        toolCalls: [{ id: 'c1', name: 'bash', input: { cmd: 'ls' } }],
        usage: { inputTokens: 10, outputTokens: 3, costUsd: 0.001 },
      },
      costUsd: 0.001,
    });
    expect(history.journal.filter((j) => j.type !== 'reserve')[2]).toMatchObject({
      type: 'tool',
      call: { id: 'c1', name: 'bash', input: { cmd: 'ls' } },
      status: 'ok',
      result: { callId: 'c1', output: 'ok' },
    });
    expect(last).toMatchObject({
      operation: 'sendToolResults',
      input: { kind: 'tool_results', results: [{ callId: 'c1', output: 'ok' }], messages: [] },
      response: { text: 'two files' },
    });
    expect(validateHistory(history.entries)).toEqual({ ok: true, records: 12, issues: [] });
  });

  it('redacts credential-named fields by default, then applies the redact hook', async () => {
    const { history } = await journaled(
      [
        {
          toolCalls: [
            {
              id: 'c1',
              name: 'deploy',
              input: { apiKey: 'sk-live-123', url: 'https://bob:hunter2@example.test/x', region: 'eu' },
            },
          ],
        },
        { text: 'deployed' },
      ],
      {
        tools: { deploy: { output: 'done, token used' } },
        redact: (e) =>
          e.type === 'tool'
            ? { ...e, call: { ...e.call, input: { ...(e.call.input as object), region: '(hidden)' } } }
            : e,
      },
    );
    const text = fs.readFileSync(history.file, 'utf8');
    expect(text).not.toContain('sk-live-123');
    expect(text).not.toContain('hunter2');
    expect(history.journal.find((j) => j.type === 'tool')!.call!.input).toEqual({
      apiKey: '[redacted]',
      url: 'https://[redacted]@example.test/x',
      region: '(hidden)',
    });
  });

  it("cuts a URL's credentials out of JSON text without reaching across it to an e-mail address further on", () => {
    const json = JSON.stringify({ homepage: 'https://acme.test', contact: { email: 'a@acme.test' } });
    const withCredentials = JSON.stringify({ db: 'postgres://bob:hunter2@db.test/x', email: 'a@acme.test' });
    expect(redactCredentials({ output: json })).toEqual({ output: json });
    expect(JSON.parse(redactCredentials(withCredentials))).toEqual({
      db: 'postgres://[redacted]@db.test/x',
      email: 'a@acme.test',
    });
    // A password with an escaped quote, braces or brackets, and one with no user before it.
    expect(JSON.parse(redactCredentials(JSON.stringify({ u: 'mongodb://u:p"q@h.test' })))).toEqual({
      u: 'mongodb://[redacted]@h.test',
    });
    expect(redactCredentials('postgres://u:a]b{c}@h.test redis://:hunter2@cache.test:6379')).toBe(
      'postgres://[redacted]@h.test redis://[redacted]@cache.test:6379',
    );
  });

  it('writes a placeholder without content when the redact hook throws', async () => {
    const { history } = await journaled([{ text: 'secret answer' }], {
      redact: () => {
        throw new Error('cannot clean');
      },
    });
    expect(fs.readFileSync(history.file, 'utf8')).not.toContain('secret answer');
    expect(history.journal.filter((j) => j.type !== 'reserve')).toEqual([
      expect.objectContaining({
        type: 'llm',
        seq: 2,
        turn: 1,
        operation: 'sendUserMessage',
        attempt: 1,
        redactError: "redact threw: cannot clean; the entry's content was not written",
      }),
    ]);
    expect(history.journal[0]).not.toHaveProperty('response');
  });

  it('needs a sink that takes journal lines, and says so', () => {
    const agent = createScriptedAgent({ replies: [] });
    expect(() => new AgentWithStateMachine(agent, { logger: false, journal: true })).toThrow(
      'Expected `sink` to be a sink that takes journal lines',
    );
    expect(() => new AgentWithStateMachine(agent, { logger: false, journal: true, sink: () => undefined })).toThrow(
      'Expected `sink` to be a sink that takes journal lines',
    );
    expect(() => new AgentWithStateMachine(agent, { logger: false, journal: 'yes' as never })).toThrow(
      'Expected `journal` to be true, false or { redact? }',
    );
    expect(
      () =>
        new AgentWithStateMachine(agent, {
          logger: false,
          journal: { redact: 1 as never },
          sink: { write: () => undefined, journal: () => undefined },
        }),
    ).toThrow('Expected `journal.redact` to be a function');
  });

  it('keeps every file valid, with one llm line per attempt and one tool line per call, for any scripted run (property-based)', async () => {
    const reply = fc.oneof(
      fc.constant<ScriptedReply>({ text: 'done' }),
      fc.constant<ScriptedReply>({ error: 'overloaded' }),
      fc.integer({ min: 1, max: 3 }).map((n): ScriptedReply => ({
        toolCalls: Array.from({ length: n }, (_, i) => ({ id: `c${i}`, name: 'bash' })),
      })),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(reply, { minLength: 1, maxLength: 6 }), async (replies) => {
        const { history } = await journaled([...replies, { text: 'end' }]);
        expect(validateHistory(history.entries).issues).toEqual([]);
        const attempts = history.journal.filter((j) => j.type === 'llm').length;
        const calls = history.records.filter((r) => r.from === 'SendingToLLM' || r.from === 'SendingToolResults');
        // Every LLM attempt is journaled: the ones that answered, and each failure before them.
        // A call that answered says how many attempts it took; one that gave up lists its failures.
        const recorded = calls.reduce((n, r) => {
          const data = r.data as { attempts?: number; failures?: unknown[] } | undefined;
          return n + (data?.attempts ?? data?.failures?.length ?? 0);
        }, 0);
        expect(attempts).toBe(recorded);
        const ran = history.records
          .filter((r) => r.to === 'CheckingGitCommits')
          .reduce((n, r) => n + (r.data as { results: unknown[] }).results.length, 0);
        expect(history.journal.filter((j) => j.type === 'tool').length).toBeGreaterThanOrEqual(ran);
      }),
      { numRuns: 40 },
    );
  });

  it('runBatch journals each run into its history file, and refuses journal without historyDir', async () => {
    const agent = () => createScriptedAgent({ sleep: instant, replies: [{ text: 'hi' }] });
    const report = await runBatch([{ id: 'a', input: 'x', agent }], { historyDir: dir, journal: true, logger: false });
    expect((await loadHistory(report.runs[0]!.historyFile!)).journal.map((j) => j.type)).toEqual(['reserve', 'llm']);
    await expect(runBatch([{ id: 'a', input: 'x', agent }], { journal: true })).rejects.toThrow(
      'Expected `journal` to be left out (or false) unless `historyDir` is set',
    );
  });
});
