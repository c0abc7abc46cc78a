import type { Usage as AnthropicUsage } from '@anthropic-ai/sdk/resources/messages';
import type { Usage } from 'agent-state-machine';

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
 */
export function mapAnthropicUsage(usage: Partial<AnthropicUsage> | null | undefined): Usage | undefined {
  if (usage === undefined || usage === null) return undefined;
  // `iterations` is in the SDK's beta types only; the same response carries it either way.
  const reported = (usage as { iterations?: unknown }).iterations;
  const iterations = Array.isArray(reported) && reported.length > 0 ? (reported as IterationUsage[]) : undefined;
  const { input, output, read, write } = iterations === undefined ? figures(usage) : summed(iterations);
  return {
    inputTokens: input === undefined ? undefined : input + (read ?? 0) + (write ?? 0),
    outputTokens: output,
    cachedInputTokens: read,
    cacheWriteTokens: write,
    reasoningTokens: usage.output_tokens_details?.thinking_tokens ?? undefined,
  };
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
