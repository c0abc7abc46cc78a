import {
  createScriptedAgent,
  AgentWithStateMachine,
  type SettleInfo,
  type ToolCall,
  type ToolResult,
} from '../../lib/index';
import { drive } from '../helpers/drive';

const call = (id: string, name = 'bash'): ToolCall => ({ id, name });

describe('AgentWithStateMachine settleToolCalls', () => {
  it(".runTurn() settles a cancelled turn once, in call order: the finished tool's real result, then interrupted", async () => {
    const settled: Array<{ results: ToolResult[]; info: SettleInfo }> = [];
    let adapter!: AgentWithStateMachine;
    const agent = createScriptedAgent({
      sleep: async () => undefined,
      replies: [{ toolCalls: [call('c1', 'quick'), call('c2', 'cancel'), call('c3')] }, { text: 'next turn ok' }],
      tools: {
        quick: { output: 'real output' },
        cancel: () => {
          adapter.cancel('user pressed Esc');
          return Promise.reject(new Error('aborted'));
        },
        bash: { output: 'never' },
      },
    });
    agent.settleToolCalls = async (results, info) => {
      settled.push({ results, info });
    };
    adapter = new AgentWithStateMachine(agent, { logger: false, sleep: async () => undefined });
    const result = await adapter.runTurn('go');
    expect(result.outcome).toBe('cancelled');
    expect(settled).toEqual([
      {
        results: [
          { callId: 'c1', output: 'real output' },
          { callId: 'c2', output: 'interrupted: user pressed Esc', isError: true },
          { callId: 'c3', output: 'interrupted: user pressed Esc', isError: true },
        ],
        info: { outcome: 'cancelled', reason: 'cancelled during RunningTool: user pressed Esc', turn: 1 },
      },
    ]);
    expect(result.unansweredToolCalls).toBeUndefined();
    expect((await adapter.runTurn('again')).text).toBe('next turn ok');
    expect(settled).toHaveLength(1);
  });

  it('.runTurn() without settleToolCalls lists the unanswered calls with the results that answer them', async () => {
    const d = drive(
      {
        replies: [{ toolCalls: [call('c1'), call('c2')], usage: { costUsd: 0.01 } }],
        tools: { bash: { output: 'ok' } },
      },
      { budget: { maxToolCalls: 1 } },
    );
    const result = await d.adapter.runTurn('go');
    expect(result.outcome).toBe('budget_exceeded');
    expect(result.unansweredToolCalls).toEqual([
      { call: call('c1'), result: { callId: 'c1', output: 'ok' } },
      {
        call: call('c2'),
        result: {
          callId: 'c2',
          output: 'not run: budget exceeded: 1 tool call of 1 tool call after 1 LLM call',
          isError: true,
        },
      },
    ]);
  });

  it('.runTurn() settles the real results when sendToolResults fails for good', async () => {
    const d = drive({
      replies: [{ toolCalls: [call('c1')] }, { error: 'HTTP 400' }],
      tools: { bash: { output: 'ok' } },
    });
    const result = await d.adapter.runTurn('go');
    expect(result.outcome).toBe('error');
    expect(result.unansweredToolCalls).toEqual([{ call: call('c1'), result: { callId: 'c1', output: 'ok' } }]);
  });

  it('.runTurn() leaves nothing unanswered once sendToolResults succeeded', async () => {
    const d = drive(
      {
        replies: [{ toolCalls: [call('c1')] }, { toolCalls: [call('c2')] }, { error: 'boom' }],
        tools: { bash: { output: 'ok' } },
      },
      { retry: { retries: 0 } },
    );
    const result = await d.adapter.runTurn('go');
    expect(result.unansweredToolCalls).toEqual([{ call: call('c2'), result: { callId: 'c2', output: 'ok' } }]);
  });

  it('.runTurn() records a failing settleToolCalls without changing the outcome, and does not hang on one that never settles', async () => {
    const d = drive(
      { replies: [{ toolCalls: [call('c1')] }, { error: 'x' }], tools: { bash: { output: 'ok' } } },
      { retry: { retries: 0 }, cancelGraceMs: 5 },
    );
    d.agent.settleToolCalls = () => Promise.reject(new Error('disk full'));
    const failed = await d.adapter.runTurn('go');
    expect(failed.outcome).toBe('error');
    expect(failed.settleError?.message).toBe('settleToolCalls failed: disk full');
    expect(failed.unansweredToolCalls).toHaveLength(1);

    const d2 = drive(
      { replies: [{ toolCalls: [call('c1')] }, { error: 'x' }], tools: { bash: { output: 'ok' } } },
      { retry: { retries: 0 }, cancelGraceMs: 5, sleep: (ms) => new Promise((r) => setTimeout(r, ms)) },
    );
    d2.agent.settleToolCalls = () => new Promise(() => undefined);
    const hung = await d2.adapter.runTurn('go');
    expect(hung.outcome).toBe('error');
    expect(hung.settleError?.message).toMatch(/^settleToolCalls failed: did not finish within the 5 ms grace/);
  });

  it('.runTurn() keeps text sent alongside tool calls in texts', async () => {
    const d = drive({
      replies: [{ text: 'Let me look.', toolCalls: [call('c1')] }, { text: 'Found it.' }],
      tools: { bash: { output: 'ok' } },
    });
    const result = await d.adapter.runTurn('go');
    expect(result.texts).toEqual(['Let me look.']);
    expect(result.text).toBe('Found it.');
  });
});
