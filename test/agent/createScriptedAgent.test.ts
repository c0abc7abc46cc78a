import { createScriptedAgent } from '../../lib/index';

const ctx = () => ({ signal: new AbortController().signal, turn: 1 });

describe('createScriptedAgent()', () => {
  it('replies in order across both LLM operations and records every call', async () => {
    const agent = createScriptedAgent({ replies: [{ text: 'a' }, { toolCalls: [{ id: '1', name: 't' }] }] });
    await expect(agent.sendUserMessage('hi', ctx())).resolves.toEqual({ text: 'a' });
    await expect(agent.sendToolResults([], ['m'], { ...ctx(), attempt: 2 })).resolves.toEqual({
      toolCalls: [{ id: '1', name: 't' }],
    });
    expect(agent.remaining).toBe(0);
    await expect(agent.sendUserMessage('more', ctx())).rejects.toThrow(
      'script exhausted: no reply 3 (the script has 2)',
    );
    expect(agent.calls).toEqual([
      { op: 'sendUserMessage', message: 'hi', attempt: 1 },
      { op: 'sendToolResults', results: [], messages: ['m'], attempt: 2 },
      { op: 'sendUserMessage', message: 'more', attempt: 1 },
    ]);
  });

  it('throws scripted errors and returns raw values as they are', async () => {
    const agent = createScriptedAgent({ replies: [{ error: 'rate limited' }, { raw: 42 }] });
    await expect(agent.sendUserMessage('x', ctx())).rejects.toThrow('rate limited');
    await expect(agent.sendUserMessage('x', ctx())).resolves.toBe(42);
  });

  it('runs canned and function tools, and names an unknown one', async () => {
    const agent = createScriptedAgent({
      replies: [],
      tools: { a: { output: 'A' }, b: { isError: true }, c: (call) => `ran ${call.id}`, d: { error: 'nope' } },
    });
    await expect(agent.runTool({ id: '1', name: 'a' }, ctx())).resolves.toEqual({ callId: '1', output: 'A' });
    await expect(agent.runTool({ id: '2', name: 'b' }, ctx())).resolves.toEqual({
      callId: '2',
      output: 'b done',
      isError: true,
    });
    await expect(agent.runTool({ id: '3', name: 'c' }, ctx())).resolves.toEqual({ callId: '3', output: 'ran 3' });
    await expect(agent.runTool({ id: '4', name: 'd' }, ctx())).rejects.toThrow('nope');
    await expect(agent.runTool({ id: '5', name: 'zz' }, ctx())).rejects.toThrow('unknown tool zz');
  });

  it('has the optional operations only when scripted', async () => {
    expect(createScriptedAgent({ replies: [] }).checkGitCommits).toBeUndefined();
    const agent = createScriptedAgent({
      replies: [],
      commits: [['a1']],
      formatterMessages: ['fmt'],
      additionalMessages: [['hey']],
    });
    await expect(agent.checkGitCommits!(ctx())).resolves.toEqual(['a1']);
    await expect(agent.checkGitCommits!(ctx())).resolves.toEqual([]);
    await expect(agent.runAutoformatters!(['a1'], ctx())).resolves.toEqual(['fmt']);
    await expect(agent.gatherAdditionalMessages!(ctx())).resolves.toEqual(['hey']);
  });

  it('aborts a delayed reply through the signal', async () => {
    const controller = new AbortController();
    const agent = createScriptedAgent({
      replies: [{ text: 'late', delayMs: 1000 }],
      sleep: async () => controller.abort(new Error('stop')),
    });
    await expect(agent.sendUserMessage('x', { signal: controller.signal, turn: 1 })).rejects.toThrow('stop');
  });

  it('rejects a script without replies', () => {
    expect(() => createScriptedAgent({} as never)).toThrow(
      'Expected `script` to be an object with replies: ScriptedReply[], got `{}` (object)',
    );
  });
});
