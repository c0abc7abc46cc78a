import { createOpenAI } from '@ai-sdk/openai';
import { tool as langchainTool } from '@langchain/core/tools';
import { MemorySaver } from '@langchain/langgraph';
import { createReactAgent } from '@langchain/langgraph/prebuilt';
import { ChatOpenAI } from '@langchain/openai';
import { generateText, streamText, tool } from 'ai';
import { z } from 'zod';
import { runBatch, type FrameworkTask } from '../../lib/index';
import { mirrorAISDK } from '../../lib/integrations/ai-sdk';
import { LangGraphMirror } from '../../lib/integrations/langgraph';
import { chatApprovalServer, type ApprovalServer } from '../helpers/approvalBatch';

// The batch's `approve` policy fails closed where it cannot be put on a tool: a framework given
// `deploy` unwrapped (not through mirrorAISDK({ tools }) or lg.wrapTools()) would run it with
// nobody asked. The response that calls it ends the run in Error, naming the policy and the
// tool, before any of its tools runs; the other task, which calls no named tool, ends as usual.

const UNCARRIED = /`approve`.*names call c2 \(deploy\), and tool deploy reaches the framework without it/;

let server: ApprovalServer;
beforeEach(async () => {
  server = await chatApprovalServer((content) => JSON.stringify(content));
});
afterEach(() => server.close());

async function expectRefused(task: (id: string) => FrameworkTask, ran: () => number): Promise<void> {
  // t1 calls `ls` and `deploy`; t0 calls `ls` only.
  const report = await runBatch([task('t0'), task('t1')], { approve: { deploy: true }, logger: false });
  expect(report.runs.map((r) => [r.id, r.outcome])).toEqual([
    ['t0', 'end_of_turn'],
    ['t1', 'error'],
  ]);
  expect(report.runs[1]!.error?.message).toMatch(UNCARRIED);
  expect(ran()).toBe(0);
  // t1's one request was answered and charged; nothing went back to the model with a tool's result.
  expect(report.runs[1]!.usage.llmCalls).toBe(1);
  expect(server.exchanges.filter((e) => JSON.stringify(e.body).includes('task t1'))).toHaveLength(1);
}

describe('the `approve` policy on tools that cannot carry it: the run ends before they run', () => {
  for (const variant of ['generate', 'stream'] as const)
    it(`AI SDK ${variant}Text given its tools unwrapped`, async () => {
      let ran = 0;
      const model = createOpenAI({ apiKey: 'sk-local', baseURL: server.baseURL }).chat('gpt-local');
      const tools = {
        ls: tool({ inputSchema: z.object({ dir: z.string() }), execute: async () => (ran++, 'a b') }),
        deploy: tool({ inputSchema: z.object({ target: z.string() }), execute: async () => (ran++, 'deployed') }),
      };
      const task = (id: string): FrameworkTask => ({
        id,
        input: `task ${id}`,
        drive: async (mirror) => {
          // The model wrapped, the tools not: the SDK would run them unasked.
          const m = mirrorAISDK({ mirror, model, maxRetries: 0 });
          const settings = { ...m.settings, tools, prompt: `task ${id}`, maxOutputTokens: 500 };
          if (variant === 'stream') await streamText(settings).consumeStream({ onError: () => undefined });
          else await generateText(settings);
        },
      });
      // t0's `ls` runs once; t1's neither.
      await expectRefused(task, () => ran - 1);
    });

  it('LangGraph given its tools unwrapped', async () => {
    let ran = 0;
    const ls = langchainTool(async () => (ran++, 'a b'), {
      name: 'ls',
      description: 'Lists a folder',
      schema: z.object({ dir: z.string() }),
    });
    const deploy = langchainTool(async () => (ran++, 'deployed'), {
      name: 'deploy',
      description: 'Deploys',
      schema: z.object({ target: z.string() }),
    });
    const task = (id: string): FrameworkTask => ({
      id,
      input: `task ${id}`,
      drive: async (mirror) => {
        const lg = new LangGraphMirror({ mirror });
        const llm = new ChatOpenAI({
          model: 'gpt-local',
          apiKey: 'sk-local',
          configuration: { baseURL: server.baseURL },
          maxRetries: 0,
          maxTokens: 500,
        });
        const agent = createReactAgent({
          llm: lg.wrapModel(llm),
          tools: [ls, deploy],
          checkpointer: new MemorySaver(),
          version: 'v2',
        });
        await lg.run(
          agent,
          { messages: [{ role: 'user', content: `task ${id}` }] },
          { configurable: { thread_id: id } },
        );
      },
    });
    await expectRefused(task, () => ran - 1);
  });
});
