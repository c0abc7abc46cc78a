import {
  AgentWithStateMachine,
  Budget,
  BudgetExceededError,
  ContractViolationError,
  createScriptedAgent,
  InvalidArgumentError,
  LLMCallError,
  MachineMovedError,
  OperationError,
  TurnCancelledError,
  TurnInProgressError,
  type AgentLoop,
  type ToolCall,
} from '../../lib/index';
import { drive } from '../helpers/drive';

const call = (id: string, name = 'bash', input?: unknown): ToolCall => ({
  id,
  name,
  ...(input === undefined ? {} : { input }),
});
const TOOL_ROUND = ['ToolUseRequested', 'CheckingForCancellation', 'RunningTool', 'CheckingGitCommits'];

describe('AgentWithStateMachine', () => {
  describe('.runTurn()', () => {
    it('ends a text-only turn: Ready → WaitingForUserInput → SendingToLLM → ProcessingLLMResponse → EndOfTurn', async () => {
      const d = drive({ replies: [{ text: 'Hello!', usage: { inputTokens: 12, outputTokens: 3, costUsd: 0.001 } }] });
      const result = await d.adapter.runTurn('hi');
      expect(result).toEqual({
        outcome: 'end_of_turn',
        text: 'Hello!',
        turn: 1,
        transitions: 4,
        usage: {
          inputTokens: 12,
          outputTokens: 3,
          costUsd: 0.001,
          toolCalls: 0,
          llmCalls: 1,
          wallMs: 0,
          uncertainUsd: 0,
          releasedUsd: 0,
          unpricedCalls: 0,
        },
      });
      expect(d.path()).toEqual(['WaitingForUserInput', 'SendingToLLM', 'ProcessingLLMResponse', 'EndOfTurn']);
      expect(d.agent.calls).toEqual([{ op: 'sendUserMessage', message: 'hi', attempt: 1 }]);
      expect(d.adapter.machine.isInTerminalState()).toBe(true);
      expect(d.rejected).toEqual([]);
    });

    it('runs tool rounds with a git commit and formatters, sending results with gathered messages', async () => {
      const d = drive({
        replies: [
          { toolCalls: [call('c1', 'edit', { path: 'a.ts' }), call('c2', 'bash')], usage: { costUsd: 0.01 } },
          { toolCalls: [call('c3', 'bash')], usage: { costUsd: 0.01 } },
          { text: 'All done.', usage: { costUsd: 0.01 } },
        ],
        tools: { edit: { output: 'edited a.ts' }, bash: { output: 'ok' } },
        commits: [['abc123'], []],
        formatterMessages: ['prettier reformatted a.ts in abc123'],
        additionalMessages: [['also fix the typo'], []],
      });
      const result = await d.adapter.runTurn('refactor a.ts');
      expect(result.outcome).toBe('end_of_turn');
      expect(result.text).toBe('All done.');
      expect(d.path()).toEqual([
        'WaitingForUserInput',
        'SendingToLLM',
        'ProcessingLLMResponse',
        ...TOOL_ROUND,
        'RunningAutoformatters',
        'CheckingBudget',
        'GatheringAdditionalMessages',
        'SendingToolResults',
        'ProcessingLLMResponse',
        ...TOOL_ROUND,
        'CheckingBudget',
        'GatheringAdditionalMessages',
        'SendingToolResults',
        'ProcessingLLMResponse',
        'EndOfTurn',
      ]);
      expect(d.agent.calls.map((c) => c.op)).toEqual([
        'sendUserMessage',
        'runTool',
        'runTool',
        'checkGitCommits',
        'runAutoformatters',
        'gatherAdditionalMessages',
        'sendToolResults',
        'runTool',
        'checkGitCommits',
        'gatherAdditionalMessages',
        'sendToolResults',
      ]);
      expect(d.agent.calls[6]).toEqual({
        op: 'sendToolResults',
        results: [
          { callId: 'c1', output: 'edited a.ts' },
          { callId: 'c2', output: 'ok' },
        ],
        messages: ['also fix the typo', 'prettier reformatted a.ts in abc123'],
        attempt: 1,
      });
      expect(result.usage).toMatchObject({ costUsd: 0.03, toolCalls: 3, llmCalls: 3 });
      const records = d.adapter.machine.history();
      expect(records.find((r) => r.to === 'RunningTool')!.data).toEqual({
        calls: [
          { id: 'c1', name: 'edit' },
          { id: 'c2', name: 'bash' },
        ],
      });
      expect(records.find((r) => r.to === 'RunningAutoformatters')!.data).toEqual({ commits: ['abc123'] });
      expect(d.rejected).toEqual([]);
    });

    it('works without the optional operations', async () => {
      const d = drive({ replies: [{ toolCalls: [call('c1')] }, { text: 'done' }], tools: { bash: { output: 'ok' } } });
      await d.adapter.runTurn('go');
      expect(d.path()).toContain('CheckingBudget');
      expect(d.agent.calls.map((c) => c.op)).toEqual(['sendUserMessage', 'runTool', 'sendToolResults']);
    });

    it('sends a throwing tool back to the LLM as an error result and goes on', async () => {
      const d = drive({
        replies: [{ toolCalls: [call('c1', 'rm'), call('c2', 'bash')] }, { text: 'recovered' }],
        tools: { rm: { error: 'permission denied' }, bash: () => Promise.reject('a string, not an Error') },
      });
      const result = await d.adapter.runTurn('clean up');
      expect(result.outcome).toBe('end_of_turn');
      const sent = d.agent.calls.find((c) => c.op === 'sendToolResults');
      expect(sent).toMatchObject({
        results: [
          { callId: 'c1', output: 'permission denied', isError: true },
          { callId: 'c2', output: 'a string, not an Error', isError: true },
        ],
      });
      expect(d.rejected).toEqual([]);
    });

    it('starts the next turn from the terminal state of the last one', async () => {
      const d = drive({ replies: [{ text: 'one' }, { text: 'two' }] });
      await d.adapter.runTurn('1');
      d.mark();
      const second = await d.adapter.runTurn('2');
      expect(second).toMatchObject({ outcome: 'end_of_turn', text: 'two', turn: 2, transitions: 4 });
      expect(
        d.adapter.machine
          .history()
          .slice(-4)
          .map((r) => `${r.from}→${r.to}`)[0],
      ).toBe('EndOfTurn→WaitingForUserInput');
      expect(d.adapter.usage.llmCalls).toBe(2);
    });

    it('throws TurnInProgressError when a turn is already running, and a clear error for a bad input', async () => {
      let release!: () => void;
      const agent = createScriptedAgent({ replies: [{ text: 'slow' }] });
      const adapter = new AgentWithStateMachine(
        { ...agent, sendUserMessage: () => new Promise((r) => (release = () => r({ text: 'ok' }))) },
        { logger: false },
      );
      const first = adapter.runTurn('a');
      expect(adapter.running).toBe(true);
      await expect(adapter.runTurn('b')).rejects.toThrow(TurnInProgressError);
      await expect(adapter.runTurn('b')).rejects.toThrow(
        'runTurn() called while turn 1 is still running (in SendingToLLM); await it or cancel() it first',
      );
      release();
      await expect(first).resolves.toMatchObject({ outcome: 'end_of_turn' });
      await expect(adapter.runTurn(42 as never)).rejects.toThrow(
        'Expected `input` to be a string (the user message), got `42` (number)',
      );
    });
  });

  describe('LLM failures', () => {
    it('retries with exponential backoff and jitter, recording each attempt', async () => {
      const d = drive(
        { replies: [{ error: '529 overloaded' }, { error: 'socket hang up' }, { text: 'third time lucky' }] },
        { retry: { retries: 2, baseDelayMs: 100 } },
      );
      const result = await d.adapter.runTurn('hi');
      expect(result).toMatchObject({ outcome: 'end_of_turn', text: 'third time lucky', usage: { llmCalls: 3 } });
      // random() = 0.5: half the exponential delay plus a quarter of it.
      expect(d.sleeps).toEqual([75, 150]);
      expect(d.agent.calls.map((c) => (c.op === 'sendUserMessage' ? c.attempt : c.op))).toEqual([1, 2, 3]);
      expect(d.path()).toEqual(['WaitingForUserInput', 'SendingToLLM', 'ProcessingLLMResponse', 'EndOfTurn']);
      expect(d.adapter.machine.history()[2]!.data).toMatchObject({
        attempts: 3,
        failures: [
          { attempt: 1, error: '529 overloaded', delayMs: 75 },
          { attempt: 2, error: 'socket hang up', delayMs: 150 },
        ],
      });
    });

    it('ends in Error with the cause kept when retries are spent', async () => {
      const d = drive(
        { replies: [{ toolCalls: [call('c1')] }, { error: 'boom 1' }, { error: 'boom 2' }] },
        { retry: { retries: 1, baseDelayMs: 10 } },
      );
      const d2 = await d.adapter.runTurn('go');
      expect(d2.outcome).toBe('error');
      expect(d2.error).toBeInstanceOf(LLMCallError);
      expect(d2.error!.message).toBe('sendToolResults failed after 2 attempts: boom 2');
      expect((d2.error as LLMCallError).cause).toEqual(new Error('boom 2'));
      expect((d2.error as LLMCallError).attempts).toEqual([
        { attempt: 1, error: 'boom 1', delayMs: 8 },
        { attempt: 2, error: 'boom 2' },
      ]);
      expect(d.path().slice(-2)).toEqual(['SendingToolResults', 'Error']);
      expect(d.rejected).toEqual([]);
    });

    it('does not retry what shouldRetry refuses', async () => {
      const d = drive(
        { replies: [{ error: '401 invalid api key' }, { text: 'never sent' }] },
        { retry: { shouldRetry: (e) => !String(e).includes('401') } },
      );
      const result = await d.adapter.runTurn('hi');
      expect(result.outcome).toBe('error');
      expect(d.agent.calls).toHaveLength(1);
      expect(d.sleeps).toEqual([]);
      expect(d.path()).toEqual(['WaitingForUserInput', 'SendingToLLM', 'Error']);
    });
  });

  describe('odd tool-call ids', () => {
    it('answers calls with empty and repeated ids, one result per call, in order', async () => {
      const d = drive({
        replies: [{ toolCalls: [call('', 'bash'), call('a', 'bash'), call('a', 'bash')] }, { text: 'done' }],
        tools: {
          bash: (c) => ({ callId: c.id, output: `ran ${String((c.input as { n?: number } | undefined)?.n ?? c.id)}` }),
        },
      });
      const result = await d.adapter.runTurn('go');
      expect(result.outcome).toBe('end_of_turn');
      const sent = d.agent.calls.find((c) => c.op === 'sendToolResults')!;
      expect(sent.op === 'sendToolResults' && sent.results.map((r) => [r.callId, r.output])).toEqual([
        ['', 'ran '],
        ['a', 'ran a'],
        ['a', 'ran a'],
      ]);
      expect(d.rejected).toEqual([]);
    });

    it('leaves no call with an odd id unanswered when a budget stops the turn between them', async () => {
      const d = drive(
        {
          replies: [{ toolCalls: [call('a', 'bash'), call('a', 'bash'), call('', 'bash')] }],
          tools: { bash: { output: 'ok' } },
        },
        { budget: { maxToolCalls: 1 } },
      );
      const result = await d.adapter.runTurn('go');
      expect(result.outcome).toBe('budget_exceeded');
      expect(result.unansweredToolCalls!.map((u) => [u.call.id, u.result.callId, u.result.output])).toEqual([
        ['a', 'a', 'ok'],
        ['a', 'a', 'not run: budget exceeded: 1 tool call of 1 tool call after 1 LLM call'],
        ['', '', 'not run: budget exceeded: 1 tool call of 1 tool call after 1 LLM call'],
      ]);
      expect(d.rejected).toEqual([]);
    });
  });

  describe('contract violations', () => {
    it.each([
      [
        { raw: null },
        'sendUserMessage broke its contract: expected an LLMResponse object { text?, toolCalls?, usage? }, got `null`',
      ],
      [{ raw: { text: 5 } }, 'sendUserMessage broke its contract: text must be a string, got `5` (number)'],
      [
        { raw: { toolCalls: [{ id: 'a', name: '' }] } },
        'sendUserMessage broke its contract: toolCalls[0].name must be a non-empty string, got `` (string)',
      ],
      [
        { raw: { toolCalls: [{ id: 7, name: 'x' }] } },
        'sendUserMessage broke its contract: toolCalls[0].id must be a string, got `7` (number)',
      ],
      [
        { raw: { usage: { inputTokens: 5 } } },
        "sendUserMessage broke its contract: a response needs text (a string) or toolCalls (an array), got an object with keys usage — return an LLMResponse, not the SDK's raw response",
      ],
      [
        { raw: { choices: [{ message: { content: 'hi' } }] } },
        "sendUserMessage broke its contract: a response needs text (a string) or toolCalls (an array), got an object with keys choices — return an LLMResponse, not the SDK's raw response",
      ],
    ])('ends the turn in Error for a malformed LLM response %p', async (reply, message) => {
      const d = drive({ replies: [reply] });
      const result = await d.adapter.runTurn('hi');
      expect(result.outcome).toBe('error');
      expect(result.error).toBeInstanceOf(ContractViolationError);
      expect(result.error!.message).toBe(message);
      expect(d.path()).toEqual(['WaitingForUserInput', 'SendingToLLM', 'Error']);
      expect(d.rejected).toEqual([]);
    });

    it('ends the turn in Error for a tool result with the wrong call id', async () => {
      const d = drive({
        replies: [{ toolCalls: [call('c1')] }],
        tools: { bash: () => ({ callId: 'zzz', output: 'x' }) },
      });
      const result = await d.adapter.runTurn('hi');
      expect(result.error!.message).toBe(
        "runTool(bash) broke its contract: result.callId must be `c1` (string) (the call's id), got `zzz` (string)",
      );
      expect(d.path().slice(-2)).toEqual(['RunningTool', 'Error']);
    });

    it('forces Error where the table has no edge to it (CheckingGitCommits)', async () => {
      const d = drive({ replies: [{ toolCalls: [call('c1')] }], tools: { bash: { output: 'ok' } }, commits: [] });
      d.agent.checkGitCommits = async () => 'abc' as never;
      const result = await d.adapter.runTurn('hi');
      expect(result.error!.message).toBe(
        'checkGitCommits broke its contract: expected an array of strings, got `abc` (string)',
      );
      expect(d.path().slice(-2)).toEqual(['CheckingGitCommits', 'Error!']);
      expect(d.rejected).toEqual([]);
    });

    it('keeps going when git or formatters throw, noting the failure in the record', async () => {
      const d = drive({ replies: [{ toolCalls: [call('c1')] }, { text: 'ok' }], tools: { bash: { output: 'ok' } } });
      d.agent.checkGitCommits = async () => {
        throw new Error('not a git repository');
      };
      const result = await d.adapter.runTurn('hi');
      expect(result.outcome).toBe('end_of_turn');
      expect(d.adapter.machine.history().find((r) => r.to === 'CheckingBudget')!.data).toEqual({
        gitError: 'not a git repository',
      });
    });

    it('ends in Error when gathering messages fails', async () => {
      const d = drive({
        replies: [{ toolCalls: [call('c1')] }],
        tools: { bash: { output: 'ok' } },
        additionalMessages: [],
      });
      d.agent.gatherAdditionalMessages = async () => {
        throw new Error('queue closed');
      };
      const result = await d.adapter.runTurn('hi');
      expect(result.error).toBeInstanceOf(OperationError);
      expect(result.error!.message).toBe('gatherAdditionalMessages failed: queue closed');
      expect(d.path().slice(-2)).toEqual(['GatheringAdditionalMessages', 'Error']);
    });
  });

  describe('misuse and odd agents', () => {
    it('charges the usage a malformed response reports, so budgets still see the spend', async () => {
      const d = drive(
        { replies: [{ raw: { text: 42, usage: { costUsd: 1 } } }] },
        { budget: { maxCostUsd: 0.5, strict: false } },
      );
      const result = await d.adapter.runTurn('hi');
      expect(result.outcome).toBe('error');
      expect(result.error).toBeInstanceOf(ContractViolationError);
      expect(d.adapter.usage.costUsd).toBe(1);
      expect((await d.adapter.runTurn('again')).outcome).toBe('budget_exceeded');
    });

    it('ends with a legal move to Error naming a throwing shouldRetry', async () => {
      const d = drive(
        { replies: [{ error: '503' }] },
        {
          retry: {
            shouldRetry: () => {
              throw new Error('predicate bug');
            },
          },
        },
      );
      const result = await d.adapter.runTurn('hi');
      expect(result.error).toBeInstanceOf(OperationError);
      expect(result.error!.message).toBe('retry.shouldRetry failed: predicate bug');
      expect(d.path()).toEqual(['WaitingForUserInput', 'SendingToLLM', 'Error']);
      expect(d.rejected).toEqual([]);
    });

    it('stops a turn whose machine was moved behind its back, without asking for an illegal move', async () => {
      const d = drive({
        replies: [{ toolCalls: [call('c1', 'meddle')] }, { text: 'next turn is fine' }],
        tools: { meddle: (c) => (d.adapter.machine.reset(), { callId: c.id, output: 'done' }) },
      });
      const result = await d.adapter.runTurn('go');
      expect(result.outcome).toBe('error');
      expect(result.error).toBeInstanceOf(MachineMovedError);
      expect(result.error!.message).toBe(
        'the machine was moved outside the adapter during turn 1: expected RunningTool, found Ready (move it between turns, not during one)',
      );
      expect(d.adapter.machine.history().at(-1)).toMatchObject({ from: 'Ready', to: 'Error', forced: true });
      expect(d.rejected).toEqual([]);
      expect((await d.adapter.runTurn('again')).outcome).toBe('end_of_turn');
    });
  });

  describe('cancellation', () => {
    it('at CheckingForCancellation: a legal move to Cancelled, no tool runs', async () => {
      const d = drive({
        replies: [{ toolCalls: [call('c1'), call('c2')] }, { text: 'next turn' }],
        tools: { bash: { output: 'ok' } },
      });
      d.adapter.machine.onTransition((r) => {
        if (r.to === 'ToolUseRequested') d.adapter.cancel('user pressed Esc');
      });
      const result = await d.adapter.runTurn('go');
      expect(result.outcome).toBe('cancelled');
      expect(result.error).toEqual(new TurnCancelledError('user pressed Esc', 'CheckingForCancellation'));
      expect(d.path()).toEqual([
        'WaitingForUserInput',
        'SendingToLLM',
        'ProcessingLLMResponse',
        'ToolUseRequested',
        'CheckingForCancellation',
        'Cancelled',
      ]);
      // The record that ends the turn says how it ended and what the agent has spent.
      expect(d.adapter.machine.history().at(-1)!.data).toEqual({
        reason: 'user pressed Esc',
        interrupted: ['c1', 'c2'],
        outcome: 'cancelled',
        usage: {
          inputTokens: 0,
          outputTokens: 0,
          costUsd: 0,
          toolCalls: 0,
          llmCalls: 1,
          wallMs: 0,
          uncertainUsd: 0,
          releasedUsd: 0,
          unpricedCalls: 1,
        },
      });
      expect(d.agent.calls.map((c) => c.op)).toEqual(['sendUserMessage']);
      expect(d.rejected).toEqual([]);
    });

    it('mid-tool: the running tool finishes, the rest are interrupted, a forced move to Cancelled; the next turn works', async () => {
      const d = drive({
        replies: [{ toolCalls: [call('c1', 'slow'), call('c2'), call('c3')] }, { text: 'fresh turn' }],
        tools: {
          slow: (c) => {
            d.adapter.cancel('user pressed Esc');
            return { callId: c.id, output: 'finished anyway' };
          },
          bash: { output: 'ok' },
        },
      });
      const result = await d.adapter.runTurn('go');
      expect(result.outcome).toBe('cancelled');
      expect(d.path().slice(-2)).toEqual(['RunningTool', 'Cancelled!']);
      const cancelled = d.adapter.machine.history().at(-1)!;
      expect(cancelled.description).toBe('cancelled during RunningTool: user pressed Esc');
      expect(cancelled.data).toEqual({
        reason: 'user pressed Esc',
        results: [
          { callId: 'c1', name: 'slow', isError: false, ms: 0 },
          { callId: 'c2', name: 'bash', isError: true, ms: 0, note: 'interrupted: user pressed Esc' },
          { callId: 'c3', name: 'bash', isError: true, ms: 0, note: 'interrupted: user pressed Esc' },
        ],
        outcome: 'cancelled',
        usage: {
          inputTokens: 0,
          outputTokens: 0,
          costUsd: 0,
          toolCalls: 1,
          llmCalls: 1,
          wallMs: 0,
          uncertainUsd: 0,
          releasedUsd: 0,
          unpricedCalls: 1,
        },
      });
      expect(d.agent.calls.filter((c) => c.op === 'runTool')).toHaveLength(1);
      expect(d.rejected).toEqual([]);

      d.mark();
      const next = await d.adapter.runTurn('again');
      expect(next).toMatchObject({ outcome: 'end_of_turn', text: 'fresh turn' });
      expect(d.path()).toEqual(['WaitingForUserInput', 'SendingToLLM', 'ProcessingLLMResponse', 'EndOfTurn']);
    });

    it('does not hang on a tool that ignores its signal: it is abandoned after the grace period', async () => {
      const d = drive(
        {
          replies: [{ toolCalls: [call('c1', 'stuck')] }],
          tools: {
            stuck: () => {
              d.adapter.cancel('timeout from the UI');
              return new Promise<string>(() => undefined);
            },
          },
        },
        { cancelGraceMs: 250 },
      );
      const result = await d.adapter.runTurn('go');
      expect(result.outcome).toBe('cancelled');
      expect(d.sleeps).toEqual([250]);
      expect(d.adapter.machine.history().at(-1)!.data).toMatchObject({
        results: [{ callId: 'c1', note: 'interrupted: timeout from the UI (the tool did not stop within 250 ms)' }],
      });
    });

    it('reaches the LLM call through its signal, and forces Cancelled from SendingToLLM', async () => {
      const d = drive({ replies: [] });
      let seen: AbortSignal | undefined;
      d.agent.sendUserMessage = (_m, ctx) => {
        seen = ctx.signal;
        return new Promise((_resolve, reject) =>
          ctx.signal.addEventListener('abort', () => reject(new Error('request aborted'))),
        );
      };
      const turn = d.adapter.runTurn('hi');
      await Promise.resolve();
      expect(d.adapter.cancel()).toBe(true);
      const result = await turn;
      expect(seen!.aborted).toBe(true);
      expect(result).toMatchObject({
        outcome: 'cancelled',
        error: { reason: 'cancelled by the caller', during: 'SendingToLLM' },
      });
      expect(d.path()).toEqual(['WaitingForUserInput', 'SendingToLLM', 'Cancelled!']);
      expect(d.adapter.cancel()).toBe(false);
    });

    it("follows the caller's AbortSignal, and a signal aborted before the turn makes no call", async () => {
      const d = drive({ replies: [{ text: 'unused' }] });
      const controller = new AbortController();
      controller.abort();
      const result = await d.adapter.runTurn('hi', { signal: controller.signal });
      expect(result).toMatchObject({ outcome: 'cancelled', transitions: 2 });
      expect(d.path()).toEqual(['WaitingForUserInput', 'Error']);
      expect(d.adapter.machine.history().at(-1)).toMatchObject({
        description: "cancelled before the turn started: aborted by the caller's signal",
        data: { outcome: 'cancelled' },
        forced: false,
      });
      expect(d.agent.calls).toEqual([]);
      await expect(() => d.adapter.runTurn('x', { signal: 'stop' as never })).rejects.toThrow(
        'Expected `signal` to be an AbortSignal',
      );
    });
  });

  describe('budget', () => {
    it('stops at CheckingBudget with the numbers in the message', async () => {
      const d = drive(
        {
          replies: [
            { toolCalls: [call('c1')], usage: { costUsd: 0.31 } },
            { toolCalls: [call('c2')], usage: { costUsd: 0.31 } },
          ],
          tools: { bash: { output: 'ok' } },
        },
        { budget: { maxCostUsd: 0.5, strict: false } },
      );
      const result = await d.adapter.runTurn('go');
      expect(result.outcome).toBe('budget_exceeded');
      expect(result.error).toEqual(
        new BudgetExceededError('budget exceeded: $0.6200 of $0.5000 after 2 LLM calls', 'maxCostUsd', 0.62, 0.5),
      );
      expect(d.path().slice(-3)).toEqual(['CheckingGitCommits', 'CheckingBudget', 'BudgetExceeded']);
      // The second response's tool never started: the budget was spent before it.
      expect(d.agent.calls.map((c) => c.op)).toEqual(['sendUserMessage', 'runTool', 'sendToolResults']);
      expect(d.rejected).toEqual([]);
    });

    it('makes no call on a spent budget, and shows it with a legal move to Error', async () => {
      const d = drive(
        { replies: [{ text: 'a', usage: { inputTokens: 600, outputTokens: 500 } }, { text: 'never' }] },
        { budget: { maxTokens: 1000 } },
      );
      expect((await d.adapter.runTurn('first')).outcome).toBe('end_of_turn');
      d.mark();
      const result = await d.adapter.runTurn('second');
      expect(result.outcome).toBe('budget_exceeded');
      expect(result.error!.message).toBe('budget exceeded: 1,100 tokens of 1,000 tokens after 1 LLM call');
      expect(d.path()).toEqual(['WaitingForUserInput', 'Error']);
      expect(d.adapter.machine.history().at(-1)!.data).toEqual({
        outcome: 'budget_exceeded',
        limit: 'maxTokens',
        used: 1100,
        max: 1000,
        usage: {
          inputTokens: 600,
          outputTokens: 500,
          costUsd: 0,
          toolCalls: 0,
          llmCalls: 1,
          wallMs: 0,
          uncertainUsd: 0,
          releasedUsd: 0,
          unpricedCalls: 1,
        },
      });
      expect(d.agent.calls).toHaveLength(1);
    });

    it('starts no tool once maxToolCalls is reached', async () => {
      const d = drive(
        { replies: [{ toolCalls: [call('c1'), call('c2'), call('c3')] }], tools: { bash: { output: 'ok' } } },
        { budget: { maxToolCalls: 2 } },
      );
      const result = await d.adapter.runTurn('go');
      expect(result.outcome).toBe('budget_exceeded');
      expect(d.agent.calls.filter((c) => c.op === 'runTool')).toHaveLength(2);
      expect(result.error!.message).toBe('budget exceeded: 2 tool calls of 2 tool calls after 1 LLM call');
    });

    it('makes no retry once maxLlmCalls is reached', async () => {
      const d = drive({ replies: [{ error: 'flaky' }, { text: 'never' }] }, { budget: { maxLlmCalls: 1 } });
      const result = await d.adapter.runTurn('go');
      expect(result.outcome).toBe('budget_exceeded');
      expect(d.agent.calls).toHaveLength(1);
      expect(d.path()).toEqual(['WaitingForUserInput', 'SendingToLLM', 'Error']);
    });

    it('counts wall time spent inside turns', async () => {
      const d = drive(
        {
          replies: [{ toolCalls: [call('c1', 'slow')] }, { text: 'never' }],
          tools: { slow: (c) => (d.clock.advance(5000), { callId: c.id, output: 'done' }) },
        },
        { budget: { maxWallMs: 4000 } },
      );
      const result = await d.adapter.runTurn('go');
      expect(result.outcome).toBe('budget_exceeded');
      expect(result.error!.message).toBe('budget exceeded: 5.0 s of wall time, of 4.0 s after 1 LLM call');
    });

    it('charges shared budgets too, and stops when one of them is spent', async () => {
      const shared = new Budget({ maxCostUsd: 1, strict: false }, { label: 'shared budget' });
      shared.charge({ costUsd: 0.95 });
      const d = drive(
        { replies: [{ toolCalls: [call('c1')], usage: { costUsd: 0.1 } }], tools: { bash: { output: 'ok' } } },
        { sharedBudgets: [shared] },
      );
      const result = await d.adapter.runTurn('go');
      // The shared budget's figures, then the run's own.
      expect(result.error!.message).toBe(
        'shared budget exceeded: $1.0500 of $1.0000 after 1 LLM call; this run: cost $0.1000 after 1 LLM call',
      );
      expect(shared.usage.costUsd).toBe(1.05);
    });
  });

  describe('construction', () => {
    it('names a missing or wrong operation', () => {
      const agent = createScriptedAgent({ replies: [] });
      expect(() => new AgentWithStateMachine({ ...agent, sendUserMessage: undefined } as never)).toThrow(
        new InvalidArgumentError('agent.sendUserMessage', 'a function (it is required)', undefined),
      );
      expect(() => new AgentWithStateMachine({ ...agent, checkGitCommits: 'yes' } as never)).toThrow(
        'Expected `agent.checkGitCommits` to be a function or undefined, got `yes` (string)',
      );
      expect(() => new AgentWithStateMachine(null as never)).toThrow(
        'Expected `agent` to be an object with sendUserMessage, sendToolResults, runTool, got `null`',
      );
    });

    it.each([
      [
        { budget: { maxCostUsd: -1 } },
        'Expected `budget.maxCostUsd` to be a non-negative finite number, got `-1` (number)',
      ],
      [
        { budget: { maxTokens: '100' } },
        'Expected `budget.maxTokens` to be a non-negative finite number, got `100` (string)',
      ],
      [
        { budget: { maxCost: 5 } },
        'Expected `budget.maxCost` to be one of the limits maxCostUsd, maxTokens, maxToolCalls, maxLlmCalls, maxWallMs (unknown key), got `5` (number)',
      ],
      [{ retry: { retries: 1.5 } }, 'Expected `retry.retries` to be a non-negative integer, got `1.5` (number)'],
      [{ retry: { retires: 1 } }, 'Unknown option `retires` of the `retry` option; did you mean `retries`?'],
      [{ retry: { maxAttempts: 1 } }, 'Unknown option `maxAttempts` of the `retry` option'],
      [
        { journal: true, ledger: false, sink: { write: () => undefined, journal: () => undefined } },
        'Expected `ledger` to be left out or true while `journal` is on',
      ],
      [
        { cancelGraceMs: Number.NaN },
        'Expected `cancelGraceMs` to be a non-negative finite number, got `NaN` (number)',
      ],
      [{ maxHistorySize: 0 }, 'Expected `maxHistorySize` to be a positive integer or Infinity, got `0` (number)'],
    ])('rejects %p with a clear error', (options, message) => {
      expect(
        () =>
          new AgentWithStateMachine(createScriptedAgent({ replies: [] }), { logger: false, ...(options as object) }),
      ).toThrow(message);
    });
  });
});

describe('AgentWithStateMachine turn signals', () => {
  const textAgent = (onCall: (signal: AbortSignal) => void): AgentLoop => ({
    sendUserMessage: async (_message, { signal }) => {
      onCall(signal);
      return { text: 'done' };
    },
    sendToolResults: async () => ({ text: 'done' }),
    runTool: async (call) => ({ callId: call.id, output: '' }),
  });

  it('.runTurn() releases a listener left on its signal with the reason "turn ended"', async () => {
    const heard: unknown[] = [];
    let seen: AbortSignal | undefined;
    const agent = new AgentWithStateMachine(
      textAgent((signal) => {
        seen = signal;
        signal.addEventListener('abort', () => heard.push(signal.reason));
      }),
      { logger: false },
    );
    const result = await agent.runTurn('hi');
    expect(result.outcome).toBe('end_of_turn');
    expect(heard).toEqual(['turn ended']);
    expect(seen?.aborted).toBe(true);
  });

  it('.runTurn() leaves a signal nobody listens to unaborted, and a later turn still cancels through its own', async () => {
    const signals: AbortSignal[] = [];
    const agent: AgentWithStateMachine = new AgentWithStateMachine(
      textAgent((signal) => {
        signals.push(signal);
        if (signals.length === 2) agent.cancel('stop');
      }),
      { logger: false },
    );
    expect((await agent.runTurn('one')).outcome).toBe('end_of_turn');
    expect(signals[0]!.aborted).toBe(false);
    const second = await agent.runTurn('two');
    expect(second.outcome).toBe('cancelled');
    expect(signals[1]!.aborted).toBe(true);
    const third = await agent.runTurn('three');
    expect(third.outcome).toBe('end_of_turn');
    expect(signals[2]!.aborted).toBe(false);
  });
});
