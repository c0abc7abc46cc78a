/**
 * `npm run example:openai-responses`: the small coding agent (read_file, list_files, bash in a
 * temp folder) on the `openai` client's Responses API, wrapped by `AgentWithStateMachine` — the
 * whole integration is the `fromOpenAIResponses(...)` call plus the tools. With OPENAI_API_KEY
 * (OPENAI_BASE_URL for another endpoint; OPENAI_MODEL, default gpt-5-mini) it talks to that
 * endpoint; otherwise to the local Responses server in examples/servers/, offline, so it
 * always runs. The offline model reasons before each step: its reasoning items are stored by
 * the server and carried back with the conversation, as the API does.
 */
import OpenAI from 'openai';
import type { TurnResult } from '../lib/index';
import { fromOpenAIResponses } from '../lib/integrations/openai';
import { startOpenAIResponsesServer, type ResponsesAction } from './servers/openaiResponsesServer';
import { runCodingTurn, type CodingExampleOptions } from './coding/runCodingTurn';
import { codingTools, makeWorkspace, scriptedStep } from './coding/workspace';

/** The offline model: the plan of `scriptedStep`, spoken in the Responses API, with a line of reasoning first. */
function respondOffline(body: { input: { type?: string; role?: string; output?: unknown }[] }): ResponsesAction {
  const lastUser = body.input.map((i) => ((i.type ?? 'message') === 'message' ? i.role : i.type)).lastIndexOf('user');
  const outputs = body.input
    .slice(lastUser + 1)
    .flatMap((i) => (i.type === 'function_call_output' ? [String(i.output)] : []));
  const step = scriptedStep(outputs);
  const reasoning = { summary: ['call' in step ? `Next: ${step.call.name}.` : 'I know enough to answer.'] };
  return 'call' in step
    ? {
        reasoning,
        ...(step.say !== undefined ? { text: step.say } : {}),
        toolCalls: [{ name: step.call.name, arguments: JSON.stringify(step.call.input) }],
      }
    : { reasoning, text: step.say };
}

export async function runOpenAIResponsesAgent(options: CodingExampleOptions = {}): Promise<TurnResult> {
  const print = options.print ?? ((line: string) => process.stdout.write(`${line}\n`));
  const env = options.env ?? process.env;
  const live = Boolean(env.OPENAI_API_KEY);
  const server = live ? undefined : await startOpenAIResponsesServer({ respond: respondOffline });
  const client = live
    ? new OpenAI({ apiKey: env.OPENAI_API_KEY, baseURL: env.OPENAI_BASE_URL })
    : new OpenAI({ apiKey: 'sk-local', baseURL: server!.baseURL });
  const model = env.OPENAI_MODEL ?? 'gpt-5-mini';
  const dir = await makeWorkspace();
  print(
    `${live ? `Endpoint ${env.OPENAI_BASE_URL ?? 'api.openai.com'}` : `Local Responses server ${server!.baseURL} (offline)`}, model ${model}, workspace ${dir}`,
  );
  return runCodingTurn(
    (onText) =>
      fromOpenAIResponses(client, {
        model,
        system: 'You are a careful coding agent. Use the tools to inspect the project before answering. Be brief.',
        tools: codingTools(dir),
        stream: { onText },
        // store: false would keep nothing on OpenAI's servers; reasoning then travels encrypted.
      }),
    print,
    { dir, server },
  );
}

if (require.main === module) {
  runOpenAIResponsesAgent().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
