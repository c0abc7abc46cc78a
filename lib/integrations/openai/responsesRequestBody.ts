import type {
  FunctionTool,
  ResponseCreateParamsNonStreaming,
  ResponseIncludable,
  ResponseInputItem,
} from 'openai/resources/responses/responses';
import type { OperationContext } from 'agent-state-machine';
import { loweredMaxTokens } from '../../internal/loweredMaxTokens';
import { besideGivenTools, toolDefinitions, type SdkTool } from '../../internal/sdkTools';
import type { OpenAIResponsesOptions } from './OpenAIResponsesOptions';
import { userMessage } from './inputItems';

/** What every request of a Responses loop is made from, fixed when the loop is made. */
export interface ResponsesRequestParts {
  options: OpenAIResponsesOptions;
  /** The loop's tools, read at every request (a record updated in place offers its current tools). */
  tools: Readonly<Record<string, SdkTool>>;
  /** The conversation so far, as the loop keeps it. */
  items: ResponseInputItem[];
  store: boolean | undefined;
  include: ResponseIncludable[];
  /**
   * Where the last response's items begin in `items` (undefined before one, or once compacted):
   * a final call without the last round (`ctx.withoutLastRound`) sends the items before it.
   */
  roundAt?: number | undefined;
}

/**
 * The body of one request: the conversation and `pending` (the items this call adds), the
 * loop's tools beside those of `request`, and the max output tokens lowered to what the budget
 * leaves (`ctx.maxOutputTokens`). Throws when that is below the API's least, 16.
 */
export function responsesRequestBody(
  parts: ResponsesRequestParts,
  pending: ResponseInputItem[],
  ctx: OperationContext,
): ResponseCreateParamsNonStreaming {
  const { options, store, include } = parts;
  const toolParams = functionTools(parts.tools, options.strictTools ?? false);
  const configured =
    options.maxTokens ??
    (typeof options.request?.max_output_tokens === 'number' ? options.request.max_output_tokens : undefined);
  const limit = loweredMaxTokens(configured, ctx.maxOutputTokens);
  // The API takes no max_output_tokens below 16: a lower cap cannot be honoured by this loop.
  if (limit !== undefined && limit < 16)
    throw new Error(
      `fromOpenAIResponses cannot ask for ${limit} output tokens (the API's least max_output_tokens is 16): set minOutputTokens to 16 or more`,
    );
  return {
    ...options.request,
    model: options.model,
    // The budget note rides on this request alone.
    input: [...sentItems(parts, pending, ctx), ...(ctx.budgetNote === undefined ? [] : [userMessage(ctx.budgetNote)])],
    ...(options.system !== undefined ? { instructions: options.system } : {}),
    // Tools given in `request` (hosted ones such as web search) are kept beside the loop's own.
    ...besideGivenTools(options.request?.tools, toolParams),
    // A final call may use no tool; the definitions stay for the function calls already in the input.
    ...(ctx.wrapUp !== undefined && (toolParams.length > 0 || options.request?.tools !== undefined)
      ? { tool_choice: 'none' }
      : {}),
    ...(limit !== undefined ? { max_output_tokens: limit } : {}),
    ...(store !== undefined ? { store } : {}),
    ...(include.length > 0 ? { include } : {}),
  } as ResponseCreateParamsNonStreaming;
}

/**
 * The conversation and `pending`; a final call without the last round (`ctx.withoutLastRound`)
 * sends the items as they stood before its last response, then the instruction.
 */
function sentItems(
  parts: ResponsesRequestParts,
  pending: ResponseInputItem[],
  ctx: OperationContext,
): ResponseInputItem[] {
  const { items, roundAt } = parts;
  if (ctx.withoutLastRound === true && ctx.wrapUp !== undefined && roundAt !== undefined)
    return [...items.slice(0, roundAt), userMessage(ctx.wrapUp)];
  return [...items, ...pending];
}

/** The loop's tools as the API's `function` tools, as the record holds them now. */
function functionTools(tools: Readonly<Record<string, SdkTool>>, strict: boolean): FunctionTool[] {
  return toolDefinitions(tools).map((definition) => ({ type: 'function', ...definition, strict }));
}
