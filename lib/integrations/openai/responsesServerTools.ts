import type { ServerToolPlan } from '../../internal/serverToolInputBound';
import type { UnboundedWhy } from '../../internal/unboundedLoop';

/** Built-in tools the Responses API runs and bills itself, beside web search: no fee of ours prices them. */
const UNPRICED = /^(file_search|code_interpreter|image_generation|computer_use)/;

/**
 * Pure: the server tools among `tools` (a Responses request's `tools`) and what they may add to
 * a request, or why that has no bound; undefined when it declares none. Each web search is
 * billed at its fee and its results join the request's input, so a request that offers one is
 * bounded only with:
 * - `max_tool_calls` (the most built-in tool calls one response makes, over all such tools);
 * - a bound on one search's results: `resultTokens` (the loop's `serverToolResultTokens`), as
 *   OpenAI states none.
 * File search, code interpreter, image generation and computer use are billed by other measures
 * (per call, container time, images) that no price of ours holds: a request that offers one has
 * no bound.
 */
export function responsesServerToolPlan(
  tools: unknown,
  maxToolCalls: unknown,
  resultTokens: number | undefined,
): ServerToolPlan | { unbounded: UnboundedWhy } | undefined {
  if (!Array.isArray(tools)) return undefined;
  let search: string | undefined;
  for (const tool of tools as unknown[]) {
    const type = typeof tool === 'object' && tool !== null ? (tool as { type?: unknown }).type : undefined;
    if (typeof type !== 'string') continue;
    if (UNPRICED.test(type))
      return {
        unbounded: {
          setting: 'options.request.tools',
          remedy: `remove the ${type} tool from \`request.tools\` (or run with \`strict: false\`)`,
          why: `the ${type} tool in request.tools is billed by a measure no price here holds (per call, container time or image), so a request that offers it has no worst case`,
        },
      };
    if (type.startsWith('web_search')) search ??= type;
  }
  if (search === undefined) return undefined;
  const named = `the ${search} tool in request.tools`;
  if (!(typeof maxToolCalls === 'number' && Number.isSafeInteger(maxToolCalls) && maxToolCalls >= 0))
    return {
      unbounded: {
        setting: 'options.request.max_tool_calls',
        remedy: '`max_tool_calls` in `request` (the most built-in tool calls one response makes)',
        why: `${named} may be used any number of times in one response (and each search pays its fee and adds its results to the input): the request sets no max_tool_calls`,
      },
    };
  if (resultTokens === undefined)
    return {
      unbounded: {
        setting: 'options.serverToolResultTokens',
        remedy: '`serverToolResultTokens` on the loop (the most input tokens one search may add)',
        why: `OpenAI states no bound on the tokens one use of ${named} adds to the request's input`,
      },
    };
  return { uses: { webSearch: maxToolCalls }, resultTokens };
}
