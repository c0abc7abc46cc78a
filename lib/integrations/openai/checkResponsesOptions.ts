import { checkSdkLoopOptions, type OptionIssue } from '../../internal/sdkTools';

/** The options `fromOpenAIChat` shares, then the Responses API's own. Pure: returns the first problem. */
export function checkResponsesOptions(options: unknown): OptionIssue | undefined {
  const shared = checkSdkLoopOptions(options);
  if (shared !== undefined) return shared;
  const o = options as Record<string, unknown>;
  if (o.messages !== undefined)
    return {
      argument: 'options.messages',
      expected: 'left out: the Responses loop keeps input items (use options.items)',
      value: o.messages,
    };
  if (o.items !== undefined && !Array.isArray(o.items))
    return { argument: 'options.items', expected: 'an array of Responses input items, or undefined', value: o.items };
  if (o.maxTokens !== undefined && (o.maxTokens as number) < 16)
    return {
      argument: 'options.maxTokens',
      expected: 'an integer of 16 or more (the least max_output_tokens the API takes)',
      value: o.maxTokens,
    };
  const perUse = o.serverToolResultTokens;
  if (perUse !== undefined && !(typeof perUse === 'number' && Number.isSafeInteger(perUse) && perUse > 0))
    return { argument: 'options.serverToolResultTokens', expected: 'a positive integer of tokens', value: perUse };
  for (const flag of ['store', 'encryptedReasoning', 'strictTools']) {
    if (o[flag] !== undefined && typeof o[flag] !== 'boolean')
      return { argument: `options.${flag}`, expected: 'a boolean or undefined', value: o[flag] };
  }
  const request = o.request as Record<string, unknown> | undefined;
  if (request === undefined) return undefined;
  const owned: Record<string, string> = {
    input: 'left out: the loop sends the conversation (use options.items)',
    store: 'left out: use options.store',
    previous_response_id: 'left out: the loop sends the whole conversation with every request',
    conversation: 'left out: the loop sends the whole conversation with every request',
    background: 'left out: the loop needs the answer in the response',
  };
  for (const [key, expected] of Object.entries(owned)) {
    if (Object.prototype.hasOwnProperty.call(request, key))
      return { argument: `options.request.${key}`, expected, value: request[key] };
  }
  if (
    request.include !== undefined &&
    !(Array.isArray(request.include) && request.include.every((v) => typeof v === 'string'))
  ) {
    return {
      argument: 'options.request.include',
      expected: 'an array of strings, or undefined',
      value: request.include,
    };
  }
  return undefined;
}
