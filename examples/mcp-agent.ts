/**
 * `npm run example:mcp`: an agent whose tools come from an MCP server.
 *
 * The server (examples/servers/mcpNotesServer.ts, built with the SDK's `McpServer`) runs as a
 * child process over stdio; `mcpTools(client)` turns its tools into tools for `fromOpenAIChat`.
 * Three turns:
 *
 * 1. a question answered with two tools, one of them returning structured content;
 * 2. a slow tool, cancelled once the server says it started: the server logs that it received
 *    the cancellation (`notifications/cancelled`), and the turn ends `cancelled`;
 * 3. a tool that adds another tool on the server: `notifications/tools/list_changed` refreshes
 *    the tools, and the model calls the new one in the same turn.
 *
 * Offline by default, against the local Chat Completions server in examples/servers/ with a
 * scripted model. With OPENAI_API_KEY (OPENAI_BASE_URL, OPENAI_MODEL) it asks that endpoint.
 */
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import OpenAI from 'openai';
import { AgentWithStateMachine, type TurnResult } from '../lib/index';
import { mcpTools } from '../lib/integrations/mcp';
import { fromOpenAIChat } from '../lib/integrations/openai';
import { startOpenAIChatServer, type ChatAction } from './servers/openaiChatServer';

const root = path.resolve(__dirname, '..');

/** The offline model: what to call next, from the question and the tool results since it. */
function respondOffline(body: {
  messages: { role: string; content?: unknown }[];
  tools?: { function: { name: string } }[];
}): ChatAction {
  const lastUser = body.messages.map((m) => m.role).lastIndexOf('user');
  const question = String(body.messages[lastUser]?.content);
  const results = body.messages.slice(lastUser + 1).flatMap((m) => (m.role === 'tool' ? [String(m.content)] : []));
  const offered = (body.tools ?? []).map((t) => t.function.name);
  const call = (name: string, args: unknown = {}) => ({ name, arguments: JSON.stringify(args) });
  if (question.includes('grocery')) {
    if (results.length === 0)
      return { content: 'Let me look.', toolCalls: [call('notes_read', { name: 'groceries' }), call('notes_stats')] };
    return { content: `You need ${results[0]}. (${results[1]?.split('\n')[0]} in all.)` };
  }
  if (question.includes('index'))
    return results.length === 0 ? { toolCalls: [call('notes_reindex')] } : { content: 'The index is rebuilt.' };
  if (question.includes('archive')) {
    if (!offered.includes('archive_search'))
      return results.length === 0
        ? { toolCalls: [call('notes_enable_archive')] }
        : { content: 'The archive did not appear.' };
    if (results.length < 2) return { toolCalls: [call('archive_search', { query: 'Oslo' })] };
    return { content: `From the archive: ${results.at(-1)}` };
  }
  return { content: 'I can read your notes.' };
}

export interface McpExampleResult {
  turns: TurnResult[];
  /** What the MCP server logged (notifications/message), in order. */
  serverLog: string[];
}

export async function runMcpExample(
  options: { print?: (line: string) => void; env?: NodeJS.ProcessEnv } = {},
): Promise<McpExampleResult> {
  const print = options.print ?? ((line: string) => process.stdout.write(`${line}\n`));
  const env = options.env ?? process.env;

  // The MCP server, as a child process; its log messages are printed as they come.
  const serverLog: string[] = [];
  const logWaiters: { pattern: RegExp; resolve: () => void }[] = [];
  const client = new Client({ name: 'agent-state-machine-example', version: '1.0.0' });
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    const line = String(n.params.data);
    serverLog.push(line);
    print(`    server log: ${line}`);
    for (const w of logWaiters.filter((w) => w.pattern.test(line))) w.resolve();
  });
  /** Resolves when the server logs a line matching `pattern`, or `bound` settles first. */
  const serverLogs = (pattern: RegExp, bound: Promise<unknown>): Promise<void> =>
    serverLog.some((l) => pattern.test(l))
      ? Promise.resolve()
      : Promise.race([
          new Promise<void>((resolve) => logWaiters.push({ pattern, resolve })),
          bound.then(() => undefined),
        ]);
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: ['--import', 'tsx', path.join(root, 'examples/servers/mcpNotesServer.ts')],
      cwd: root,
    }),
  );

  const live = Boolean(env.OPENAI_API_KEY);
  const chat = live ? undefined : await startOpenAIChatServer({ respond: respondOffline });
  try {
    const mcp = await mcpTools(client, {
      onChange: (c) =>
        print(`    tools changed: ${[...c.added.map((n) => `+${n}`), ...c.removed.map((n) => `-${n}`)].join(' ')}`),
    });
    print(
      `MCP server "${mcp.server}": ${Object.entries(mcp.tools)
        .map(([name, t]) => (name === t.mcpName ? name : `${name} (${t.mcpName})`))
        .join(', ')}`,
    );
    const openai = live
      ? new OpenAI({ apiKey: env.OPENAI_API_KEY, baseURL: env.OPENAI_BASE_URL })
      : new OpenAI({ apiKey: 'sk-local', baseURL: chat!.baseURL });
    const model = env.OPENAI_MODEL ?? 'gpt-4o-mini';
    print(
      live
        ? `Endpoint ${env.OPENAI_BASE_URL ?? 'api.openai.com'}, model ${model}`
        : `Local Chat Completions server ${chat!.baseURL} (offline)`,
    );

    // The whole integration: the MCP tools as the loop's tools.
    const loop = fromOpenAIChat(openai, {
      model,
      system: 'You keep the user’s notes. Use the tools.',
      tools: mcp.tools,
    });
    const agent = new AgentWithStateMachine(loop, { logger: false });
    agent.on('toolCall', (e) =>
      print(
        `    ${e.call.name} ${typeof e.call.input === 'string' ? e.call.input : JSON.stringify(e.call.input ?? {})} → [${e.status}] ${e.result.output.replace(/\n/g, ' | ')}`,
      ),
    );

    const turns: TurnResult[] = [];
    const ask = async (question: string, during?: (turn: Promise<TurnResult>) => Promise<void>): Promise<void> => {
      print(`\n> ${question}`);
      const turn = agent.runTurn(question);
      await during?.(turn);
      const result = await turn;
      turns.push(result);
      print(`  ${result.outcome}${result.text !== undefined ? `: ${result.text}` : ''}`);
    };

    await ask('What is on my grocery list, and how many notes do I have?');
    await ask('Rebuild the search index.', async (turn) => {
      // Cancelled like a user pressing Esc, once the server says the tool is running.
      await serverLogs(/^reindex started/, turn);
      if (agent.cancel('the user pressed Esc')) print('  (cancelling the turn)');
    });
    // The server logs the cancellation it received; the turn does not wait for that line.
    if (turns[1]?.outcome === 'cancelled')
      await serverLogs(/^reindex cancelled/, new Promise((resolve) => setTimeout(resolve, 10_000).unref()));
    await ask('Search the archive for Oslo.');
    return { turns, serverLog };
  } finally {
    await client.close();
    await chat?.close();
  }
}

if (require.main === module) {
  runMcpExample().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
