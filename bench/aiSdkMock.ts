// The AI SDK loop the mirror suites time: a mock model (`ai/test`) that answers at once, a tool
// call then text (2 steps, 1 tool call, per run), and its one tool.
import { tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';

export const STEPS_PER_RUN = 2;
export const FINAL_TEXT = 'README.md lib/';

export function mockModel(): MockLanguageModelV3 {
  let step = 0;
  const usage = {
    inputTokens: { total: 800, noCache: 800, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: 30, text: 30, reasoning: undefined },
  };
  return new MockLanguageModelV3({
    modelId: 'bench-model',
    doGenerate: async () => {
      step += 1;
      const content =
        step % 2 === 1
          ? [{ type: 'tool-call' as const, toolCallId: `c${step}`, toolName: 'list', input: '{"dir":"."}' }]
          : [{ type: 'text' as const, text: FINAL_TEXT }];
      return {
        content,
        finishReason: { unified: step % 2 === 1 ? ('tool-calls' as const) : ('stop' as const), raw: undefined },
        usage,
        warnings: [],
        response: { modelId: 'bench-model' },
      };
    },
  });
}

export const tools = {
  list: tool({ inputSchema: z.object({ dir: z.string() }), execute: async () => FINAL_TEXT }),
};
