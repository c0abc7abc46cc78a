import { type AgentEvents, type LLMAttemptEvent, type ToolCallEvent, type ToolCall } from '../../lib/index';
import { drive } from '../helpers/drive';

const call = (id: string, name = 'bash'): ToolCall => ({ id, name });

describe('AgentWithStateMachine events', () => {
  it('.on() reports turnStart, every llmAttempt (failed ones with willRetry), every toolCall, and turnEnd', async () => {
    const d = drive(
      {
        replies: [
          { error: 'socket hang up' },
          { toolCalls: [call('c1'), call('c2', 'broken')], usage: { inputTokens: 10, outputTokens: 2 } },
          { text: 'done', usage: { costUsd: 0.5 } },
        ],
        tools: { bash: { output: 'ok' }, broken: { error: 'exit 1' } },
      },
      { pricing: (u) => (u.inputTokens ?? 0) * 0.01 },
    );
    const seen: Array<[string, unknown]> = [];
    for (const name of ['turnStart', 'llmAttempt', 'toolCall', 'turnEnd'] as const)
      d.adapter.on(name, (e: unknown) => seen.push([name, e]));
    const result = await d.adapter.runTurn('go');
    expect(seen.map(([n]) => n)).toEqual([
      'turnStart',
      'llmAttempt',
      'llmAttempt',
      'toolCall',
      'toolCall',
      'llmAttempt',
      'turnEnd',
    ]);
    const attempts = seen.filter(([n]) => n === 'llmAttempt').map(([, e]) => e as LLMAttemptEvent);
    expect(attempts[0]).toMatchObject({
      turn: 1,
      operation: 'sendUserMessage',
      attempt: 1,
      input: { kind: 'user_message', message: 'go' },
      willRetry: true,
    });
    expect((attempts[0]!.error as Error).message).toBe('socket hang up');
    expect(attempts[1]).toMatchObject({
      attempt: 2,
      willRetry: false,
      usage: { inputTokens: 10, outputTokens: 2, costUsd: 0.1 },
    });
    expect(attempts[1]!.response!.toolCalls).toHaveLength(2);
    expect(attempts[2]).toMatchObject({
      operation: 'sendToolResults',
      input: { kind: 'tool_results', messages: [] },
      usage: { costUsd: 0.5 },
    });
    const tools = seen.filter(([n]) => n === 'toolCall').map(([, e]) => e as ToolCallEvent);
    expect(tools.map((t) => [t.call.id, t.status, t.result.output])).toEqual([
      ['c1', 'ok', 'ok'],
      ['c2', 'error', 'exit 1'],
    ]);
    expect(seen.at(-1)![1]).toMatchObject({ turn: 1, result });
  });

  it('.on() contains a throwing or rejecting listener: reported as listenerError, the outcome unchanged, other listeners still called', async () => {
    const d = drive({ replies: [{ toolCalls: [call('c1')] }, { text: 'done' }], tools: { bash: { output: 'ok' } } });
    const errors: Array<[string, string]> = [];
    const after: string[] = [];
    d.adapter.on('listenerError', (error, event) => errors.push([event, (error as Error).message]));
    d.adapter.on('llmAttempt', () => {
      throw new Error('tracer down');
    });
    d.adapter.on('toolCall', async () => {
      throw new Error('async tracer down');
    });
    d.adapter.on('llmAttempt', () => after.push('second listener'));
    const result = await d.adapter.runTurn('go');
    await new Promise((r) => setImmediate(r));
    expect(result.outcome).toBe('end_of_turn');
    expect(after).toEqual(['second listener', 'second listener']);
    expect(errors).toEqual([
      ['llmAttempt', 'tracer down'],
      ['toolCall', 'async tracer down'],
      ['llmAttempt', 'tracer down'],
    ]);
  });

  it('.once() and .off() add and remove listeners', async () => {
    const d = drive({ replies: [{ text: 'a' }, { text: 'b' }] });
    const once: number[] = [];
    const on: number[] = [];
    const listener = (info: AgentEvents['turnStart'][0]): void => {
      on.push(info.turn);
    };
    d.adapter.once('turnStart', (info) => once.push(info.turn));
    d.adapter.on('turnStart', listener);
    await d.adapter.runTurn('1');
    d.adapter.off('turnStart', listener);
    await d.adapter.runTurn('2');
    expect(once).toEqual([1]);
    expect(on).toEqual([1]);
  });

  it('.on() reports not_run tool calls of a turn stopped by a budget', async () => {
    const d = drive({ replies: [{ toolCalls: [call('c1'), call('c2')] }] }, { budget: { maxToolCalls: 1 } });
    const statuses: string[] = [];
    d.adapter.on('toolCall', (e) => statuses.push(`${e.call.id}:${e.status}`));
    await d.adapter.runTurn('go');
    expect(statuses).toEqual(['c1:error', 'c2:not_run']);
  });
});
