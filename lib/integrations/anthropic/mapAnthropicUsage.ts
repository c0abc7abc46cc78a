import type { Usage as AnthropicUsage } from '@anthropic-ai/sdk/resources/messages';
import type { ServerToolUses, Usage } from 'agent-state-machine';

/** One entry of `usage.iterations` (compaction, message, advisor and fallback iterations alike). */
interface IterationUsage {
  type?: string;
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
}

/**
 * Every figure the response reports, in the library's terms. Anthropic's `input_tokens` leaves
 * out the tokens read from and written to the cache; `inputTokens` here counts them all.
 *
 * When `usage.iterations` is given, the figures are its sums: Anthropic's compaction docs
 * ("Understanding usage", https://platform.claude.com/docs/en/build-with-claude/compaction)
 * say the top-level `input_tokens` and `output_tokens` "do not include compaction iteration
 * usage" and that to count the tokens "consumed and billed for a request, sum across all
 * entries in the `usage.iterations` array". An entry missing a count leaves that total unknown
 * (never read as 0).
 *
 * Server tools' uses (`serverToolUses`, billed per use) are what `usage.server_tool_use` reports,
 * or the `server_tool_use` blocks of the response's `content` when they are more: a response
 * may carry a search its usage does not count (a recorded one does), and a use never reads as 0.
 */
export function mapAnthropicUsage(
  usage: Partial<AnthropicUsage> | null | undefined,
  content?: readonly { type: string; name?: string }[],
): Usage | undefined {
  if (usage === undefined || usage === null) return undefined;
  // `iterations` is in the SDK's beta types only; the same response carries it either way.
  const reported = (usage as { iterations?: unknown }).iterations;
  const iterations = Array.isArray(reported) && reported.length > 0 ? (reported as IterationUsage[]) : undefined;
  const { input, output, read, write } = iterations === undefined ? figures(usage) : summed(iterations);
  const uses = mostUses(serverToolUses(usage.server_tool_use), content === undefined ? undefined : usesIn(content));
  return {
    inputTokens: input === undefined ? undefined : input + (read ?? 0) + (write ?? 0),
    outputTokens: output,
    cachedInputTokens: read,
    cacheWriteTokens: write,
    reasoningTokens: usage.output_tokens_details?.thinking_tokens ?? undefined,
    ...(uses === undefined ? {} : { serverToolUses: uses }),
  };
}

/**
 * The server tools' uses `usage.server_tool_use` reports (`web_search_requests`,
 * `web_fetch_requests`), billed per use: undefined when it reports none.
 */
function serverToolUses(reported: unknown): ServerToolUses | undefined {
  if (typeof reported !== 'object' || reported === null) return undefined;
  const r = reported as { web_search_requests?: unknown; web_fetch_requests?: unknown };
  const uses: ServerToolUses = {};
  if (typeof r.web_search_requests === 'number' && r.web_search_requests > 0) uses.webSearch = r.web_search_requests;
  if (typeof r.web_fetch_requests === 'number' && r.web_fetch_requests > 0) uses.webFetch = r.web_fetch_requests;
  return uses.webSearch === undefined && uses.webFetch === undefined ? undefined : uses;
}

interface Figures {
  input: number | undefined;
  output: number | undefined;
  read: number | undefined;
  write: number | undefined;
}

function figures(u: IterationUsage): Figures {
  return {
    input: u.input_tokens ?? undefined,
    output: u.output_tokens ?? undefined,
    read: u.cache_read_input_tokens ?? undefined,
    write: u.cache_creation_input_tokens ?? undefined,
  };
}

/** The iterations' sums: a count one entry lacks makes that sum unknown; a cache figure none reports stays unreported. */
function summed(iterations: readonly IterationUsage[]): Figures {
  const all = iterations.map(figures);
  const total = (key: keyof Figures): number | undefined =>
    all.some((f) => f[key] === undefined) ? undefined : all.reduce((sum, f) => sum + f[key]!, 0);
  const cache = (key: 'read' | 'write'): number | undefined =>
    all.every((f) => f[key] === undefined) ? undefined : all.reduce((sum, f) => sum + (f[key] ?? 0), 0);
  return { input: total('input'), output: total('output'), read: cache('read'), write: cache('write') };
}

/** The kind of server tool use each `server_tool_use` block name is. */
const KIND_OF: Readonly<Record<string, keyof ServerToolUses>> = {
  web_search: 'webSearch',
  web_fetch: 'webFetch',
  code_execution: 'codeExecution',
  bash_code_execution: 'codeExecution',
  text_editor_code_execution: 'codeExecution',
};

/** The server tools' uses the response's `server_tool_use` blocks show, by kind. */
function usesIn(content: readonly { type: string; name?: string }[]): ServerToolUses | undefined {
  let uses: ServerToolUses | undefined;
  for (const block of content) {
    if (block.type !== 'server_tool_use' || block.name === undefined || !Object.hasOwn(KIND_OF, block.name)) continue;
    const kind = KIND_OF[block.name]!;
    (uses ??= {})[kind] = (uses[kind] ?? 0) + 1;
  }
  return uses;
}

/** Kind by kind, the larger count of two. */
function mostUses(a: ServerToolUses | undefined, b: ServerToolUses | undefined): ServerToolUses | undefined {
  if (a === undefined || b === undefined) return a ?? b;
  const most: ServerToolUses = {};
  for (const kind of ['webSearch', 'webFetch', 'codeExecution'] as const) {
    const n = Math.max(a[kind] ?? 0, b[kind] ?? 0);
    if (n > 0) most[kind] = n;
  }
  return most;
}
