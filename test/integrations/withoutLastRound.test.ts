import type { LanguageModelV3CallOptions } from '@ai-sdk/provider';
import { tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import type OpenAI from 'openai';
import { z } from 'zod';
import type { AgentLoop, LLMCallBound, OperationContext, ToolResult } from 'agent-state-machine';
import { fromAISDK } from '../../lib/integrations/ai-sdk';
import { fromAnthropic } from '../../lib/integrations/anthropic';
import { fromOpenAIChat, fromOpenAIResponses } from '../../lib/integrations/openai';
import { readFile } from '../helpers/sdkLoopTest';

// `ctx.withoutLastRound` on the ready-made loops: a final call whose results do not fit even
// withheld is sent as the call before it was sent as a final call — the last response and its
// results left out, the instruction last — so that its bound is the one the final call's hold was
// worked out from; the conversation still keeps the round, answered, and the answer.

const INSTRUCTION = 'Answer now.';
const ctx: OperationContext = { signal: new AbortController().signal, turn: 1 };
const final: OperationContext = { ...ctx, wrapUp: INSTRUCTION };
const call = (id: string) => ({ id, name: 'read_file', input: { path: `${id}.txt` } });
const result = (id: string): ToolResult => ({ callId: id, output: `contents of ${id}.txt, `.repeat(20) });
const withheld = (id: string): ToolResult => ({ callId: id, output: 'not sent: the budget ran out', isError: true });

/**
 * Two rounds accepted as a resumed run would (c1, then c2); the bound of the second call as a
 * final call, before the second round, and of the third without the last round, after it; then
 * the third is made.
 */
async function twoRounds(loop: AgentLoop): Promise<{ asFinal: LLMCallBound; without: LLMCallBound }> {
  await loop.acceptRecorded!(
    'sendUserMessage',
    { kind: 'user_message', message: 'Read the files' },
    { toolCalls: [call('c1')] },
    ctx,
  );
  const asFinal = await loop.llmCallBound!(
    { operation: 'sendToolResults', results: [result('c1')], messages: [] },
    final,
  );
  await loop.acceptRecorded!(
    'sendToolResults',
    { kind: 'tool_results', results: [result('c1')], messages: [] },
    { toolCalls: [call('c2')] },
    ctx,
  );
  const flags = { ...final, withoutLastRound: true as const };
  const without = await loop.llmCallBound!(
    { operation: 'sendToolResults', results: [withheld('c2')], messages: [] },
    flags,
  );
  const response = await loop.sendToolResults([withheld('c2')], [], flags);
  expect(response.text).toBe('the answer');
  return { asFinal, without };
}

describe('ctx.withoutLastRound on the ready-made loops', () => {
  it('fromOpenAIChat', async () => {
    const bodies: Array<{ messages: Array<{ role: string; content?: unknown }> }> = [];
    const client = {
      chat: {
        completions: {
          create: async (body: (typeof bodies)[number]) => {
            bodies.push(structuredClone(body));
            return {
              choices: [{ message: { role: 'assistant', content: 'the answer' }, finish_reason: 'stop' }],
              usage: { prompt_tokens: 1, completion_tokens: 1 },
              model: 'gpt-4o-mini',
            };
          },
        },
      },
    } as unknown as OpenAI;
    const loop = fromOpenAIChat(client, {
      model: 'gpt-4o-mini',
      tools: { read_file: readFile },
      system: 'Be terse.',
      maxTokens: 50,
    });
    const { asFinal, without } = await twoRounds(loop);
    expect(without).toEqual(asFinal);
    const sent = bodies[0]!.messages;
    expect(sent.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'user']);
    expect(sent.at(-1)!.content).toBe(INSTRUCTION);
    expect(JSON.stringify(sent)).not.toContain('c2');
    // The conversation keeps the round, answered, then the instruction and the answer.
    expect(loop.messages.map((m) => m.role)).toEqual([
      'system',
      'user',
      'assistant',
      'tool',
      'assistant',
      'tool',
      'user',
      'assistant',
    ]);
  });

  it('fromOpenAIResponses', async () => {
    const bodies: Array<{ input: Array<{ type?: string; role?: string; content?: unknown }> }> = [];
    const client = {
      responses: {
        create: async (body: (typeof bodies)[number]) => {
          bodies.push(structuredClone(body));
          return {
            id: 'resp_1',
            status: 'completed',
            output: [
              {
                type: 'message',
                id: 'msg_1',
                role: 'assistant',
                status: 'completed',
                content: [{ type: 'output_text', text: 'the answer', annotations: [] }],
              },
            ],
            usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 },
            model: 'gpt-4o-mini',
          };
        },
      },
    } as unknown as OpenAI;
    const loop = fromOpenAIResponses(client, { model: 'gpt-4o-mini', tools: { read_file: readFile }, maxTokens: 50 });
    const { asFinal, without } = await twoRounds(loop);
    expect(without).toEqual(asFinal);
    const sent = bodies[0]!.input;
    expect(sent.map((i) => i.type ?? i.role)).toEqual(['message', 'function_call', 'function_call_output', 'message']);
    expect(JSON.stringify(sent.at(-1))).toContain(INSTRUCTION);
    expect(JSON.stringify(sent)).not.toContain('c2');
    // The conversation keeps the round, answered, then the instruction and the answer.
    expect(loop.items.map((i) => (i as { type?: string }).type)).toEqual([
      'message',
      'function_call',
      'function_call_output',
      'function_call',
      'function_call_output',
      'message',
      'message',
    ]);
  });

  it('fromAnthropic', async () => {
    const bodies: Array<{ messages: Array<{ role: string; content: unknown }> }> = [];
    const client = {
      messages: {
        create: async (body: (typeof bodies)[number]) => {
          bodies.push(structuredClone(body));
          return {
            content: [{ type: 'text', text: 'the answer' }],
            usage: { input_tokens: 1, output_tokens: 1 },
            model: 'claude-x',
            stop_reason: 'end_turn',
          };
        },
      },
    };
    const loop = fromAnthropic(client as never, { model: 'claude-x', tools: { read_file: readFile }, maxTokens: 50 });
    const { asFinal, without } = await twoRounds(loop);
    expect(without).toEqual(asFinal);
    const sent = bodies[0]!.messages;
    expect(sent.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    // The instruction joins the results of the round before, as the call before would have sent it.
    expect((sent.at(-1)!.content as Array<{ type: string; text?: string }>).map((b) => b.type)).toEqual([
      'tool_result',
      'text',
    ]);
    expect(JSON.stringify(sent)).toContain(INSTRUCTION);
    expect(JSON.stringify(sent)).not.toContain('c2');
    expect(loop.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user', 'assistant']);
  });

  it('fromAISDK', async () => {
    const prompts: LanguageModelV3CallOptions['prompt'][] = [];
    const model = new MockLanguageModelV3({
      modelId: 'm',
      doGenerate: async (options) => {
        prompts.push(options.prompt);
        return {
          content: [{ type: 'text', text: 'the answer' }],
          finishReason: { unified: 'stop', raw: 'stop' },
          usage: {
            inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
            outputTokens: { total: 1, text: 1, reasoning: undefined },
          },
          warnings: [],
        };
      },
    });
    const read_file = tool({ description: 'Reads a file', inputSchema: z.object({ path: z.string() }) });
    const loop = fromAISDK({ model, tools: { read_file }, system: 'Be terse.', callSettings: { maxOutputTokens: 50 } });
    const { asFinal, without } = await twoRounds(loop);
    expect(without).toEqual(asFinal);
    const sent = prompts[0]!;
    expect(sent.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'user']);
    expect(JSON.stringify(sent.at(-1))).toContain(INSTRUCTION);
    expect(JSON.stringify(sent)).not.toContain('c2');
    expect(loop.messages.map((m) => m.role)).toEqual([
      'user',
      'assistant',
      'tool',
      'assistant',
      'tool',
      'user',
      'assistant',
    ]);
  });
});
