/**
 * `npm run example:anthropic`: the coding agent of examples/openai-agent.ts on
 * `@anthropic-ai/sdk`'s Messages API — the whole integration is the `fromAnthropic(...)` call
 * plus the tools. With ANTHROPIC_API_KEY (ANTHROPIC_BASE_URL optional; ANTHROPIC_MODEL,
 * default claude-haiku-4-5) it talks to that endpoint; otherwise to the local Messages server
 * in examples/servers/, offline, so it always runs.
 */
import Anthropic from '@anthropic-ai/sdk';
import type { TurnResult } from '../lib/index';
import { fromAnthropic } from '../lib/integrations/anthropic';
import { startAnthropicMessagesServer, type MessagesAction } from './servers/anthropicMessagesServer';
import { runCodingTurn, type CodingExampleOptions } from './coding/runCodingTurn';
import { codingTools, makeWorkspace, scriptedStep } from './coding/workspace';

/** The offline model: the plan of `scriptedStep`, spoken in Messages. */
function respondOffline(body: { messages: { role: string; content: unknown }[] }): MessagesAction {
  const isTurnStart = (m: { role: string; content: unknown }): boolean =>
    m.role === 'user' &&
    (typeof m.content === 'string' || !(m.content as { type: string }[]).some((b) => b.type === 'tool_result'));
  let start = body.messages.length - 1;
  while (start > 0 && !isTurnStart(body.messages[start]!)) start -= 1;
  const outputs = body.messages
    .slice(start + 1)
    .flatMap((m) => (Array.isArray(m.content) ? (m.content as { type: string; content?: unknown }[]) : []))
    .flatMap((b) => (b.type === 'tool_result' ? [String(b.content)] : []));
  const step = scriptedStep(outputs);
  return 'call' in step
    ? {
        ...(step.say !== undefined ? { text: step.say } : {}),
        toolUses: [{ name: step.call.name, input: step.call.input }],
      }
    : { text: step.say };
}

export async function runAnthropicAgent(options: CodingExampleOptions = {}): Promise<TurnResult> {
  const print = options.print ?? ((line: string) => process.stdout.write(`${line}\n`));
  const env = options.env ?? process.env;
  const live = Boolean(env.ANTHROPIC_API_KEY);
  const server = live ? undefined : await startAnthropicMessagesServer({ respond: respondOffline });
  const client = live
    ? new Anthropic({ apiKey: env.ANTHROPIC_API_KEY, baseURL: env.ANTHROPIC_BASE_URL })
    : new Anthropic({ apiKey: 'sk-ant-local', baseURL: server!.baseURL });
  const model = env.ANTHROPIC_MODEL ?? 'claude-haiku-4-5';
  const dir = await makeWorkspace();
  print(
    `${live ? `Endpoint ${env.ANTHROPIC_BASE_URL ?? 'api.anthropic.com'}` : `Local Messages server ${server!.baseURL} (offline)`}, model ${model}, workspace ${dir}`,
  );
  return runCodingTurn(
    (onText) =>
      fromAnthropic(client, {
        model,
        maxTokens: 2048,
        system: 'You are a careful coding agent. Use the tools to inspect the project before answering. Be brief.',
        tools: codingTools(dir),
        stream: { onText },
      }),
    print,
    { dir, server },
  );
}

if (require.main === module) {
  runAnthropicAgent().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
