// Past 400 lines: one MCP client's tools as loop tools — names, schemas, calls with cancellation,
// results and list changes share the client and the name map.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ToolListChangedNotificationSchema, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { InvalidArgumentError, type OperationContext, type ToolCall, type ToolResult } from 'agent-state-machine';
import { messageOf } from '../../internal/messageOf';
import { runSdkTool } from '../../internal/sdkTools';
import { toolInputCheck } from '../../internal/toolInputCheck';
import { McpToolError } from './McpToolError';
import { providerToolNames } from './providerToolNames';
import { standardInputSchema, type McpInputSchema } from './standardInputSchema';
import { toolResultText, type McpCallResult } from './toolResultText';

/** A tool as the server lists it (the SDK's `Tool`): name, title, description, input schema, annotations. */
export type McpToolInfo = Tool;

/** What `mcpTools` uses of an MCP `Client` (from `@modelcontextprotocol/sdk/client/index.js`), connected. */
export type McpClient = Pick<
  Client,
  | 'callTool'
  | 'listTools'
  | 'getServerVersion'
  | 'getServerCapabilities'
  | 'setNotificationHandler'
  | 'removeNotificationHandler'
  | 'transport'
>;

/**
 * One of the server's tools in the shape the Chat, Responses and Anthropic loops take
 * (`fromOpenAIChat({ tools })`, …). The loop checks the input against `parameters` before `run`.
 */
export interface McpTool {
  /** The tool's name on the server. Its key in `tools` is the name the LLM sees. */
  readonly mcpName: string;
  readonly description?: string;
  /** The tool's input schema, as the server sent it. */
  readonly parameters: Record<string, unknown>;
  /** Calls `tools/call` with the signal: when it aborts, the server gets `notifications/cancelled`. */
  run(input: Record<string, unknown>, ctx: { signal: AbortSignal }): Promise<{ output: string; isError?: true }>;
}

/**
 * One of the server's tools in the shape `fromAISDK({ tools })` takes (an AI SDK `Tool`).
 * `execute` throws `McpToolError` (code `tool_error`) for a result with `isError`.
 */
export interface McpAISDKTool {
  /** The tool's name on the server. Its key in `aiSdkTools` is the name the LLM sees. */
  readonly mcpName: string;
  readonly description?: string;
  readonly inputSchema: McpInputSchema;
  execute(input: Record<string, unknown>, options: { abortSignal?: AbortSignal | undefined }): Promise<string>;
}

/** A tool of the server that is not offered, and why. */
export interface McpSkippedTool {
  mcpName: string;
  reason: string;
}

/** What a refresh changed, by the names the LLM sees. */
export interface McpToolsChange {
  added: string[];
  removed: string[];
  /** Same name, new description or schema. */
  changed: string[];
}

/** Options of `mcpTools(client, options)`. */
export interface McpToolsOptions {
  /** The server's name in error messages. Default: the name the server gave when the client connected. */
  name?: string;
  /** Put before every tool's name (`files_` gives `files_read`), so the tools of several servers can share one record. */
  prefix?: string;
  /** Which of the server's tools to offer. Default: all. */
  filter?: (tool: McpToolInfo) => boolean;
  /**
   * How long one request (`tools/call`, `tools/list`) may wait for its answer, in ms. Default
   * 60,000, the SDK's. When it passes, the call is cancelled on the server and answered with an
   * error result: a server that hangs costs this long, never the whole turn.
   */
  timeoutMs?: number;
  /**
   * Follow `notifications/tools/list_changed`: list the tools again and update `tools` and
   * `aiSdkTools` in place. Default true. It replaces a handler set on the client for that
   * notification before (the client's `listChanged.tools` option); use `onChange` instead.
   */
  watch?: boolean;
  /** Called after a refresh changed the tools. */
  onChange?: (change: McpToolsChange) => void;
  /**
   * Called when a refresh that a notification started fails (the previous tools stay offered).
   * Default: `process.emitWarning`.
   */
  onError?: (error: unknown) => void;
}

/** An MCP server's tools, ready for the loops, kept up to date with the server's list. */
export interface McpTools {
  /** The server's name, as errors give it. */
  readonly server: string;
  /**
   * The tools by the name the LLM sees, for `fromOpenAIChat`, `fromOpenAIResponses` and
   * `fromAnthropic` (`tools: mcp.tools`). The same object is updated in place when the list
   * changes, and the loops read it at every request.
   */
  readonly tools: Record<string, McpTool>;
  /** The same tools for `fromAISDK({ tools: mcp.aiSdkTools })`, also updated in place. Loading it loads nothing from `ai`. */
  readonly aiSdkTools: Record<string, McpAISDKTool>;
  /** The server's tools that are not offered (filtered out, a schema no validator can compile, task-only), and why. */
  readonly skipped: readonly McpSkippedTool[];
  /**
   * Runs one tool call as `AgentLoop.runTool` does, for a loop of your own: input checked
   * against the tool's schema (a bad call is answered with the validator's message and never
   * sent), `tools/call` with the turn's signal, the result as text.
   */
  runTool(call: ToolCall, ctx: OperationContext): Promise<ToolResult>;
  /** Lists the server's tools again and updates `tools` and `aiSdkTools` in place. Calls made meanwhile share the listing. */
  refresh(): Promise<void>;
  /** Stops following `notifications/tools/list_changed`. The client stays open: closing it is yours. */
  stopWatching(): void;
}

const LIST_CHANGED = 'notifications/tools/list_changed';
const DEFAULT_TIMEOUT_MS = 60_000;

/**
 * Turns the tools of a connected MCP `Client` into tools for the loops. Every call goes through
 * `tools/call` with the turn's `AbortSignal`, so a cancelled turn reaches the server as
 * `notifications/cancelled`; input is checked against the server's schema first (ajv, as in
 * the other loops); a result with `isError` becomes an error result, text and structured
 * content are kept; a server that crashes or stops answering ends the call with an error result
 * naming it. When the server's tool list changes, `tools` is updated in place.
 *
 * ```ts
 * const mcp = await mcpTools(client);
 * const agent = new AgentWithStateMachine(fromOpenAIChat(openai, { model, tools: mcp.tools }));
 * ```
 */
export async function mcpTools(client: McpClient, options: McpToolsOptions = {}): Promise<McpTools> {
  checkOptions(client, options);
  if (client.getServerCapabilities()?.tools === undefined) {
    const server = options.name ?? client.getServerVersion()?.name ?? 'unnamed';
    throw new McpToolError('list_failed', `MCP server "${server}" offers no tools (its capabilities have no "tools")`, {
      server,
    });
  }
  const set = new McpToolSet(client, options);
  // Watching before the first listing, so a change made while it runs is not missed.
  if (options.watch !== false) set.watch();
  try {
    await set.refresh();
  } catch (error) {
    set.stopWatching();
    throw error;
  }
  return set;
}

class McpToolSet implements McpTools {
  readonly server: string;
  readonly tools: Record<string, McpTool> = {};
  readonly aiSdkTools: Record<string, McpAISDKTool> = {};
  #skipped: McpSkippedTool[] = [];
  readonly #client: McpClient;
  readonly #options: McpToolsOptions;
  readonly #timeoutMs: number;
  /** MCP name → the name the LLM sees, kept across refreshes. */
  #names = new Map<string, string>();
  /** The name the LLM sees → what the tool was made from, to tell changed tools. */
  #fingerprints = new Map<string, string>();
  #refreshing: Promise<void> | undefined;
  #listAgain = false;
  #listed = false;
  #watching = false;

  constructor(client: McpClient, options: McpToolsOptions) {
    this.#client = client;
    this.#options = options;
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.server = options.name ?? client.getServerVersion()?.name ?? 'unnamed';
  }

  get skipped(): readonly McpSkippedTool[] {
    return [...this.#skipped];
  }

  async runTool(call: ToolCall, ctx: OperationContext): Promise<ToolResult> {
    return { callId: call.id, ...(await runSdkTool(this.tools, call, ctx)) };
  }

  refresh(): Promise<void> {
    // A change announced while a listing runs may be missing from it: list once more after it.
    if (this.#refreshing !== undefined) {
      this.#listAgain = true;
      return this.#refreshing;
    }
    const run = async (): Promise<void> => {
      do {
        this.#listAgain = false;
        this.#apply(await this.#list());
      } while (this.#listAgain);
    };
    this.#refreshing = run().finally(() => {
      this.#refreshing = undefined;
    });
    return this.#refreshing;
  }

  watch(): void {
    this.#client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      // Started at once (not after an await): a tool call whose result follows the notification
      // finds the refresh under way and waits for it.
      this.refresh().catch((error: unknown) => {
        if (this.#options.onError !== undefined) this.#options.onError(error);
        // As text: Node refuses an Error from another realm (a vm context, a test sandbox).
        else process.emitWarning(messageOf(error), { type: error instanceof McpToolError ? error.name : 'Warning' });
      });
    });
    this.#watching = true;
  }

  stopWatching(): void {
    if (!this.#watching) return;
    this.#client.removeNotificationHandler(LIST_CHANGED);
    this.#watching = false;
  }

  async #list(): Promise<McpToolInfo[]> {
    const tools: McpToolInfo[] = [];
    const cursors = new Set<string>();
    let cursor: string | undefined;
    do {
      let page: Awaited<ReturnType<McpClient['listTools']>>;
      try {
        page = await this.#client.listTools(cursor === undefined ? undefined : { cursor }, {
          timeout: this.#timeoutMs,
        });
      } catch (error) {
        throw new McpToolError(
          'list_failed',
          `could not list the tools of MCP server "${this.server}": ${messageOf(error)}`,
          { server: this.server, cause: error },
        );
      }
      tools.push(...page.tools);
      cursor = page.nextCursor;
      // A server that hands out a cursor twice would be listed forever.
      if (cursor !== undefined && cursors.has(cursor)) {
        throw new McpToolError(
          'list_failed',
          `could not list the tools of MCP server "${this.server}": it sent the page cursor ${JSON.stringify(cursor)} twice`,
          { server: this.server },
        );
      }
      if (cursor !== undefined) cursors.add(cursor);
    } while (cursor !== undefined);
    return tools;
  }

  /** Puts the listed tools in place: removed ones deleted, new and changed ones (re)made, the others kept as they are. */
  #apply(listed: McpToolInfo[]): void {
    const offered: McpToolInfo[] = [];
    const skipped: McpSkippedTool[] = [];
    for (const tool of listed) {
      const reason = this.#whyNotOffered(tool);
      if (reason === undefined) offered.push(tool);
      else skipped.push({ mcpName: tool.name, reason });
    }
    const names = providerToolNames(
      offered.map((t) => t.name),
      this.#options.prefix ?? '',
      this.#names,
    );
    const fingerprints = new Map<string, string>();
    const change: McpToolsChange = { added: [], removed: [], changed: [] };
    for (const tool of offered) {
      const name = names.get(tool.name)!;
      const description = tool.description ?? tool.title;
      const fingerprint = JSON.stringify([tool.name, description, tool.inputSchema]);
      fingerprints.set(name, fingerprint);
      const before = this.#fingerprints.get(name);
      if (before === fingerprint) continue;
      (before === undefined ? change.added : change.changed).push(name);
      this.tools[name] = this.#sdkTool(tool.name, description, tool.inputSchema);
      this.aiSdkTools[name] = this.#aiSdkTool(tool.name, name, description, tool.inputSchema);
    }
    for (const name of this.#fingerprints.keys()) {
      if (fingerprints.has(name)) continue;
      change.removed.push(name);
      delete this.tools[name];
      delete this.aiSdkTools[name];
    }
    this.#names = names;
    this.#fingerprints = fingerprints;
    this.#skipped = skipped;
    const first = !this.#listed;
    this.#listed = true;
    if (!first && change.added.length + change.removed.length + change.changed.length > 0)
      this.#options.onChange?.(change);
  }

  #whyNotOffered(tool: McpToolInfo): string | undefined {
    if (this.#options.filter !== undefined && !this.#options.filter(tool)) return 'left out by the filter option';
    if (tool.execution?.taskSupport === 'required')
      return 'it runs only as a task (tasks/…), which this integration does not call';
    try {
      toolInputCheck(tool.inputSchema);
    } catch (error) {
      return `its input schema cannot be compiled: ${messageOf(error)}`;
    }
    return undefined;
  }

  #sdkTool(mcpName: string, description: string | undefined, schema: Record<string, unknown>): McpTool {
    return {
      mcpName,
      ...(description !== undefined ? { description } : {}),
      parameters: schema,
      run: (input, ctx) => this.#call(mcpName, input, ctx.signal),
    };
  }

  #aiSdkTool(
    mcpName: string,
    name: string,
    description: string | undefined,
    schema: Record<string, unknown>,
  ): McpAISDKTool {
    return {
      mcpName,
      ...(description !== undefined ? { description } : {}),
      inputSchema: standardInputSchema(schema, name),
      execute: async (input, options) => {
        const result = await this.#call(mcpName, input, options?.abortSignal);
        // An AI SDK tool reports failure by throwing; the adapter sends the message as an error result.
        if (result.isError) throw new McpToolError('tool_error', result.output, { server: this.server, tool: mcpName });
        return result.output;
      },
    };
  }

  async #call(
    mcpName: string,
    input: Record<string, unknown>,
    signal: AbortSignal | undefined,
  ): Promise<{ output: string; isError?: true }> {
    if (this.#client.transport === undefined) {
      throw new McpToolError(
        'not_connected',
        `MCP server "${this.server}" is not connected (its connection closed earlier): tool "${mcpName}" was not called`,
        { server: this.server, tool: mcpName },
      );
    }
    // The SDK never removes its abort listener from the signal it is given, so the turn's own
    // signal would send notifications/cancelled for every finished call when the turn ends. It
    // gets one per call instead, aborted only while the call runs.
    const call = new AbortController();
    const cancel = (): void => call.abort(signal?.reason);
    if (signal?.aborted === true) cancel();
    else signal?.addEventListener('abort', cancel, { once: true });
    let result: McpCallResult;
    try {
      result = (await this.#client.callTool({ name: mcpName, arguments: input }, undefined, {
        signal: call.signal,
        timeout: this.#timeoutMs,
      })) as McpCallResult;
    } catch (error) {
      // Cancelled: the SDK has sent notifications/cancelled; the adapter reports the interruption.
      if (call.signal.aborted) throw error;
      throw this.#callError(mcpName, error);
    } finally {
      signal?.removeEventListener('abort', cancel);
    }
    // A call that changed the server's tool list is answered once the new list is in place (the
    // notification arrives before the result), so the next request offers the new tools.
    if (this.#refreshing !== undefined) await this.#refreshing.catch(() => undefined);
    return toolResultText(result);
  }

  #callError(tool: string, error: unknown): McpToolError {
    const details = { server: this.server, tool, cause: error };
    const code = (error as { code?: unknown } | null)?.code;
    // The SDK's ErrorCode.ConnectionClosed and ErrorCode.RequestTimeout, read by value so an error from another copy of the SDK counts too.
    if (code === -32000) {
      return new McpToolError(
        'connection_closed',
        `MCP server "${this.server}" closed the connection while tool "${tool}" ran: the server exited or crashed (${messageOf(error)})`,
        details,
      );
    }
    if (code === -32001) {
      return new McpToolError(
        'timeout',
        `MCP server "${this.server}" did not answer tool "${tool}" within ${this.#timeoutMs} ms (the timeoutMs option); the call was cancelled on the server`,
        details,
      );
    }
    if (messageOf(error) === 'Not connected') {
      return new McpToolError(
        'not_connected',
        `MCP server "${this.server}" is not connected (its connection closed earlier): tool "${tool}" was not called`,
        details,
      );
    }
    return new McpToolError(
      'call_failed',
      `MCP server "${this.server}" answered tool "${tool}" with an error: ${messageOf(error)}`,
      details,
    );
  }
}

const CLIENT_METHODS = [
  'callTool',
  'listTools',
  'getServerVersion',
  'getServerCapabilities',
  'setNotificationHandler',
  'removeNotificationHandler',
] as const;

function checkOptions(client: unknown, options: unknown): void {
  const c = client as Record<string, unknown> | null;
  if (typeof c !== 'object' || c === null || CLIENT_METHODS.some((m) => typeof c[m] !== 'function')) {
    throw new InvalidArgumentError(
      'client',
      `an MCP Client from @modelcontextprotocol/sdk (with ${CLIENT_METHODS.join(', ')})`,
      client,
    );
  }
  if (c.transport === undefined)
    throw new InvalidArgumentError('client', 'a connected MCP Client (await client.connect(transport) first)', client);
  if (typeof options !== 'object' || options === null)
    throw new InvalidArgumentError(
      'options',
      'an object { name?, prefix?, filter?, timeoutMs?, watch?, onChange?, onError? }',
      options,
    );
  const o = options as Record<string, unknown>;
  if (o.name !== undefined && (typeof o.name !== 'string' || o.name === ''))
    throw new InvalidArgumentError('options.name', 'a non-empty string or undefined', o.name);
  if (o.prefix !== undefined && (typeof o.prefix !== 'string' || !/^[a-zA-Z0-9_-]{1,48}$/.test(o.prefix))) {
    throw new InvalidArgumentError(
      'options.prefix',
      'a string of 1–48 letters, digits, _ or - (tool names allow no other characters)',
      o.prefix,
    );
  }
  if (
    o.timeoutMs !== undefined &&
    !(Number.isInteger(o.timeoutMs) && (o.timeoutMs as number) > 0 && (o.timeoutMs as number) <= 2_147_483_647)
  ) {
    throw new InvalidArgumentError(
      'options.timeoutMs',
      'a positive integer of milliseconds, at most 2147483647',
      o.timeoutMs,
    );
  }
  if (o.watch !== undefined && typeof o.watch !== 'boolean')
    throw new InvalidArgumentError('options.watch', 'a boolean or undefined', o.watch);
  for (const fn of ['filter', 'onChange', 'onError']) {
    if (o[fn] !== undefined && typeof o[fn] !== 'function')
      throw new InvalidArgumentError(`options.${fn}`, 'a function or undefined', o[fn]);
  }
}
