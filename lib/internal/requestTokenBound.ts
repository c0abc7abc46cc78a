/**
 * The bound on input tokens the ready-made loops give for a request (`llmCallBound`): never
 * below the provider's count, for text, tool definitions, tool calls and results, and images.
 *
 * - Every byte of text a provider tokenizes is in the request's JSON (escaping only adds
 *   bytes), and a BPE token covers at least one byte: the UTF-8 length of the serialized
 *   request bounds the tokens of its content — system prompt and tool definitions included.
 * - Providers add tokens of their own around that content: per message (role markers,
 *   separators: 3 to 4 at OpenAI), per tool definition (the rendered tool namespace), per
 *   request (reply priming, tool-use system text). Counted at `MESSAGE_TOKENS` per message,
 *   `TOOL_TOKENS` per tool and `REQUEST_TOKENS` per request, above any provider's figures.
 * - An image is tokenized from its pixels, not its bytes: each image part counts
 *   `IMAGE_PART_TOKENS`, above the most any provider bills for one image (Anthropic about
 *   1,600; OpenAI high detail at most about 2,500).
 * - A file part (a PDF) counts `FILE_PART_TOKENS`: a stated figure, not a provider's maximum;
 *   a longer document can pass it.
 */
export const REQUEST_TOKENS = 256;
export const MESSAGE_TOKENS = 16;
export const TOOL_TOKENS = 32;
export const IMAGE_PART_TOKENS = 4096;
export const FILE_PART_TOKENS = 100_000;

const IMAGE_TYPES: ReadonlySet<string> = new Set(['image_url', 'input_image', 'image']);
const FILE_TYPES: ReadonlySet<string> = new Set(['file', 'input_file', 'document']);

/** `body`'s input-token bound: UTF-8 bytes of its JSON plus the stated overheads for `messages` messages and `tools` tools. */
export function requestTokenBound(body: unknown, messages: number, tools: number): number {
  const json = JSON.stringify(body) ?? '';
  let media = 0;
  // Only requests that carry parts of these kinds pay for the walk.
  if (
    json.includes('"type":"image') ||
    json.includes('"type":"input_') ||
    json.includes('"type":"file') ||
    json.includes('"type":"document')
  )
    media = mediaTokens(body);
  return utf8Length(json) + REQUEST_TOKENS + messages * MESSAGE_TOKENS + tools * TOOL_TOKENS + media;
}

function mediaTokens(value: unknown): number {
  if (typeof value !== 'object' || value === null) return 0;
  if (Array.isArray(value)) {
    let sum = 0;
    for (const item of value) sum += mediaTokens(item);
    return sum;
  }
  const type = (value as { type?: unknown }).type;
  let sum = 0;
  if (typeof type === 'string') {
    if (IMAGE_TYPES.has(type)) sum += IMAGE_PART_TOKENS;
    else if (FILE_TYPES.has(type)) sum += FILE_PART_TOKENS;
  }
  for (const key in value) sum += mediaTokens((value as Record<string, unknown>)[key]);
  return sum;
}

/**
 * The UTF-8 length of `text`, without encoding it. Node's native count: about 5× faster than a
 * JavaScript loop over the code units on a 3 KB request, and a bound is made before every call.
 * A lone surrogate counts 3 bytes, as its replacement character encodes.
 */
export function utf8Length(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}
