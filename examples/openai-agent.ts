/**
 * `npm run example:openai`: a small coding agent (read_file, list_files, bash in a temp folder)
 * on the `openai` client, wrapped by `AgentWithStateMachine` — the whole integration is the
 * `fromOpenAIChat(...)` call plus the tools. With OPENAI_API_KEY (and OPENAI_BASE_URL for any
 * OpenAI-compatible endpoint; OPENAI_MODEL, default gpt-4o-mini) it talks to that endpoint;
 * otherwise to the local Chat Completions server in examples/servers/, offline, so it always runs.
 */
import OpenAI from 'openai';
import type { TurnResult } from '../lib/index';
import { fromOpenAIChat } from '../lib/integrations/openai';
import { startOpenAIChatServer, type ChatAction } from './servers/openaiChatServer';
import { runCodingTurn, type CodingExampleOptions } from './coding/runCodingTurn';
import { codingTools, makeWorkspace, scriptedStep } from './coding/workspace';

/** The offline model: the plan of `scriptedStep`, spoken in Chat Completions. */
function respondOffline(body: { messages: { role: string; content?: unknown }[] }): ChatAction {
  const lastUser = body.messages.map((m) => m.role).lastIndexOf('user');
  const outputs = body.messages.slice(lastUser + 1).flatMap((m) => (m.role === 'tool' ? [String(m.content)] : []));
  const step = scriptedStep(outputs);
  return 'call' in step
    ? {
        ...(step.say !== undefined ? { content: step.say } : {}),
        toolCalls: [{ name: step.call.name, arguments: JSON.stringify(step.call.input) }],
      }
    : { content: step.say };
}

export async function runOpenAIAgent(options: CodingExampleOptions = {}): Promise<TurnResult> {
  const print = options.print ?? ((line: string) => process.stdout.write(`${line}\n`));
  const env = options.env ?? process.env;
  const live = Boolean(env.OPENAI_API_KEY);
  const server = live ? undefined : await startOpenAIChatServer({ respond: respondOffline });
  const client = live
    ? new OpenAI({ apiKey: env.OPENAI_API_KEY, baseURL: env.OPENAI_BASE_URL })
    : new OpenAI({ apiKey: 'sk-local', baseURL: server!.baseURL });
  const model = env.OPENAI_MODEL ?? 'gpt-4o-mini';
  const dir = await makeWorkspace();
  print(
    `${live ? `Endpoint ${env.OPENAI_BASE_URL ?? 'api.openai.com'}` : `Local Chat Completions server ${server!.baseURL} (offline)`}, model ${model}, workspace ${dir}`,
  );
  return runCodingTurn(
    (onText) =>
      fromOpenAIChat(client, {
        model,
        system: 'You are a careful coding agent. Use the tools to inspect the project before answering. Be brief.',
        tools: codingTools(dir),
        stream: { onText },
      }),
    print,
    { dir, server },
  );
}

if (require.main === module) {
  runOpenAIAgent().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
