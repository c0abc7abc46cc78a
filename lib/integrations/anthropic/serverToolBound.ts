import type { ServerToolUses } from 'agent-state-machine';
import type { ServerToolPlan } from '../../internal/serverToolInputBound';
import type { UnboundedWhy } from '../../internal/unboundedLoop';

/**
 * Pure: the server tools among `tools` (the `request.tools` of an Anthropic loop) and what they
 * may add to a request, or why that has no bound; undefined when it declares none. Each use of
 * a server tool is billed (a web search at its fee) and its results join the request's input,
 * so a request that declares one is bounded only with:
 * - `max_uses` on each web search and web fetch tool (the most uses, and fees, a request makes);
 * - a bound on one use's results: a web fetch tool's `max_content_tokens` (an approximate cap,
 *   its docs say: counted twice), else `resultTokens` (the loop's `serverToolResultTokens`) —
 *   Anthropic states no bound on a web search's results.
 * Code execution is billed by container time, not per use, and its outputs have no stated
 * bound: a request that declares it has none.
 */
export function serverToolPlan(
  tools: unknown,
  resultTokens: number | undefined,
): ServerToolPlan | { unbounded: UnboundedWhy } | undefined {
  if (!Array.isArray(tools)) return undefined;
  const uses: ServerToolUses = {};
  let perUse = 0;
  let any = false;
  for (const tool of tools as unknown[]) {
    const t = (typeof tool === 'object' && tool !== null ? tool : {}) as {
      type?: unknown;
      name?: unknown;
      max_uses?: unknown;
      max_content_tokens?: unknown;
    };
    const type = typeof t.type === 'string' ? t.type : '';
    const named = `the ${type} tool in request.tools`;
    if (type.startsWith('code_execution_'))
      return {
        unbounded: {
          setting: 'options.request.tools',
          remedy: `remove the ${type} tool from \`request.tools\` (or run with \`strict: false\`)`,
          why: `${named} is billed by container time, not per use, and its outputs have no stated bound, so a request that offers it has no worst case`,
        },
      };
    const kind = type.startsWith('web_search_') ? 'webSearch' : type.startsWith('web_fetch_') ? 'webFetch' : undefined;
    if (kind === undefined) continue;
    any = true;
    const max = t.max_uses;
    if (!(typeof max === 'number' && Number.isSafeInteger(max) && max >= 0))
      return {
        unbounded: {
          setting: 'max_uses',
          remedy: `\`max_uses\` on ${named}`,
          why: `${named} has no max_uses, so a request may use it (and pay its fee, and add its results to the input) any number of times`,
        },
      };
    uses[kind] = (uses[kind] ?? 0) + max;
    const content = t.max_content_tokens;
    const own =
      kind === 'webFetch' && typeof content === 'number' && Number.isSafeInteger(content) && content > 0
        ? 2 * content
        : undefined;
    const bound = own ?? resultTokens;
    if (bound === undefined)
      return {
        unbounded: {
          setting: 'options.serverToolResultTokens',
          remedy:
            kind === 'webFetch'
              ? `\`max_content_tokens\` on ${named}, or \`serverToolResultTokens\` on the loop`
              : '`serverToolResultTokens` on the loop (the most input tokens one search may add)',
          why: `Anthropic states no bound on the tokens one use of ${named} adds to the request's input`,
        },
      };
    perUse = Math.max(perUse, bound);
  }
  return any ? { uses, resultTokens: perUse } : undefined;
}
