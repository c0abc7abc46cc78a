// AI SDK tool approval (`needsApproval`) through mirrorAISDK: the SDK stops for a person's answer,
// the run parks in AwaitingApproval (not ended), and the answer — given to the mirror, or carried
// by the SDK's own `tool-approval-response` in the next call's messages — continues the same run.
// The real @ai-sdk/openai provider against the local server, on ai 6 (and ai 7 on Node 22+).
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, streamText, tool, type ModelMessage } from 'ai';
import { z } from 'zod';
import { validateHistory } from 'agent-state-machine/history';
import { mirrorAISDK } from '../../../lib/integrations/ai-sdk';
import { startOpenAIChatServer, type OpenAIChatServer } from '../../../examples/servers/openaiChatServer';

let server: OpenAIChatServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** The model calls `ls` and `deploy` (which waits for a person), then answers with what its tool results said. */
async function serve(): Promise<OpenAIChatServer> {
  server = await startOpenAIChatServer({
    respond: (body: { messages: Array<{ role: string; content: unknown }> }) => {
      const tools = body.messages.filter((m) => m.role === 'tool');
      if (tools.length === 0)
        return {
          toolCalls: [
            { id: 'c1', name: 'ls', arguments: '{"dir":"."}' },
            { id: 'c2', name: 'deploy', arguments: '{"target":"prod"}' },
          ],
        };
      return { content: `done: ${tools.map((m) => JSON.stringify(m.content)).join(' | ')}` };
    },
  });
  return server;
}

function toolsLogging(ran: string[]) {
  return {
    ls: tool({ inputSchema: z.object({ dir: z.string() }), execute: async () => (ran.push('ls'), 'a b') }),
    deploy: tool({
      inputSchema: z.object({ target: z.string() }),
      needsApproval: true,
      execute: async ({ target }) => (ran.push(`deploy ${target}`), 'deployed'),
    }),
  };
}

describe('mirrorAISDK: a tool that needs approval parks the run in AwaitingApproval', () => {
  it.each([
    ['generateText', false],
    ['streamText', true],
  ])('%s: approved through the mirror, the same run goes on and ends', async (_name, stream) => {
    const s = await serve();
    const ran: string[] = [];
    const m = mirrorAISDK({
      model: createOpenAI({ apiKey: 'sk', baseURL: s.baseURL }).chat('gpt-local'),
      tools: toolsLogging(ran),
      logger: false,
    });
    const messages: ModelMessage[] = [{ role: 'user', content: 'ship it' }];
    const call = async (): Promise<void> => {
      if (stream) await streamText({ ...m.settings, messages }).consumeStream();
      else await generateText({ ...m.settings, messages });
    };
    await call();
    expect(m.mirror.running).toBe(true);
    expect(m.mirror.machine.current as string).toBe('AwaitingApproval');
    expect(m.mirror.approvals.pending).toEqual([{ callId: 'c2', name: 'deploy', input: { target: 'prod' } }]);
    expect(ran).toEqual(['ls']);
    const answered = m.answered();
    m.mirror.approvals.approve('c2');
    messages.push(...(await answered)!);
    await call();
    expect(ran).toEqual(['ls', 'deploy prod']);
    expect(m.result).toMatchObject({ outcome: 'end_of_turn', turn: 1 });
    expect(m.mirror.turn).toBe(1);
    expect(s.exchanges).toHaveLength(2);
    expect(s.rejected).toEqual([]);
    const history = m.mirror.machine.history();
    expect(history.map((r) => r.to)).toEqual([
      'WaitingForUserInput',
      'SendingToLLM',
      'ProcessingLLMResponse',
      'ToolUseRequested',
      'CheckingForCancellation',
      'RunningTool',
      'AwaitingApproval',
      'RunningTool',
      'CheckingGitCommits',
      'CheckingBudget',
      'GatheringAdditionalMessages',
      'SendingToolResults',
      'ProcessingLLMResponse',
      'EndOfTurn',
    ]);
    expect(history[6]!.data).toEqual({ calls: [{ callId: 'c2', name: 'deploy', input: { target: 'prod' } }] });
    expect(validateHistory(history, m.mirror.machine.table).issues).toEqual([]);
  });

  it("denied in the SDK's own way (a tool-approval-response in the messages): the model hears the denial, the tool never runs", async () => {
    const s = await serve();
    const ran: string[] = [];
    const m = mirrorAISDK({
      model: createOpenAI({ apiKey: 'sk', baseURL: s.baseURL }).chat('gpt-local'),
      tools: toolsLogging(ran),
      logger: false,
    });
    const messages: ModelMessage[] = [{ role: 'user', content: 'ship it' }];
    const first = await generateText({ ...m.settings, messages });
    const request = first.content.find((p) => p.type === 'tool-approval-request');
    if (request?.type !== 'tool-approval-request') throw new Error('no approval request');
    messages.push(...first.response.messages, {
      role: 'tool',
      content: [
        { type: 'tool-approval-response', approvalId: request.approvalId, approved: false, reason: 'not on prod' },
      ],
    });
    const second = await generateText({ ...m.settings, messages });
    expect(ran).toEqual(['ls']);
    expect(m.result).toMatchObject({ outcome: 'end_of_turn', turn: 1 });
    expect(second.text).toContain('not on prod');
    const denied = m.mirror.machine.history().find((r) => (r.from as string) === 'AwaitingApproval');
    expect(denied?.data).toEqual({ answers: [{ callId: 'c2', approved: false, reason: 'not on prod' }] });
    expect(s.exchanges).toHaveLength(2);
    expect(s.rejected).toEqual([]);
  });

  it('a cancel while it waits ends the run as cancelled; answered() then resolves undefined', async () => {
    const s = await serve();
    const m = mirrorAISDK({
      model: createOpenAI({ apiKey: 'sk', baseURL: s.baseURL }).chat('gpt-local'),
      tools: toolsLogging([]),
      logger: false,
    });
    await generateText({ ...m.settings, prompt: 'ship it' });
    const answered = m.answered();
    m.cancel('no one is there');
    expect(await answered).toBeUndefined();
    expect(m.result).toMatchObject({ outcome: 'cancelled' });
    expect(() => m.mirror.approvals.approve('c2')).toThrow(/went on or ended/);
  });

  it('refuses by name a tool that needs approval on a mirror without the approval states', () => {
    const m = mirrorAISDK({ logger: false });
    expect(() => m.tools(toolsLogging([]))).toThrow(/tools\.deploy\.needsApproval.*approvals: true/);
  });
});
