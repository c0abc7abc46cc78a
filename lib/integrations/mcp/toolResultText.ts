import { isDeepStrictEqual } from 'node:util';

/** The parts of an MCP `tools/call` result this integration reads (the SDK's `CallToolResult`, loosely). */
export interface McpCallResult {
  content?: readonly McpContent[] | undefined;
  structuredContent?: Record<string, unknown> | undefined;
  isError?: boolean | undefined;
}

/** One content block, as MCP defines them: text, image, audio, a resource link or an embedded resource. */
export interface McpContent {
  type: string;
  text?: string;
  data?: string;
  mimeType?: string;
  uri?: string;
  name?: string;
  resource?: { uri?: string; mimeType?: string; text?: string; blob?: string };
}

/**
 * The text an MCP tool result becomes for the LLM, and whether it is an error result. Text
 * blocks are kept as they are, one per line. `structuredContent` is added as JSON, unless a
 * text block already carries the same value (servers are asked to send it both ways): JSON is
 * what the tool's output schema describes, and what a model reads best. Images, audio and
 * binary resources cannot travel in a text result, so they are named with their type and size,
 * and the model at least knows they were returned.
 */
export function toolResultText(result: McpCallResult): { output: string; isError?: true } {
  const lines: string[] = [];
  for (const block of result.content ?? []) lines.push(describeBlock(block));
  const structured = result.structuredContent;
  if (
    structured !== undefined &&
    !(result.content ?? []).some((b) => b.type === 'text' && sameJson(b.text, structured))
  )
    lines.push(JSON.stringify(structured));
  const isError = result.isError === true;
  const output = lines.join('\n');
  if (output === '')
    return isError
      ? { output: 'the tool reported an error without a message', isError }
      : { output: '(the tool returned no content)' };
  return isError ? { output, isError } : { output };
}

function describeBlock(block: McpContent): string {
  switch (block.type) {
    case 'text':
      return block.text ?? '';
    case 'image':
    case 'audio':
      return `[${block.type} ${block.mimeType ?? 'of unknown type'}, ${size(block.data)}]`;
    case 'resource_link':
      return `[resource link ${block.name ?? ''} ${block.uri ?? ''}${block.mimeType !== undefined ? ` (${block.mimeType})` : ''}]`.replace(
        / {2}/g,
        ' ',
      );
    case 'resource': {
      const r = block.resource ?? {};
      if (typeof r.text === 'string') return `[resource ${r.uri ?? ''}]\n${r.text}`;
      return `[resource ${r.uri ?? ''}, ${r.mimeType ?? 'of unknown type'}, ${size(r.blob)}]`;
    }
    default:
      return `[${block.type} content]`;
  }
}

/** The decoded size of base64 data, for people. */
function size(base64: string | undefined): string {
  if (base64 === undefined) return 'no data';
  const bytes = Math.floor((base64.replace(/=+$/, '').length * 3) / 4);
  return bytes < 1024 ? `${bytes} bytes` : `${(bytes / 1024).toFixed(1)} KiB`;
}

function sameJson(text: string | undefined, value: unknown): boolean {
  if (text === undefined) return false;
  try {
    return isDeepStrictEqual(JSON.parse(text), value);
  } catch {
    return false;
  }
}
