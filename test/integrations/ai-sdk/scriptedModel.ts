import type {
  LanguageModelV3CallOptions,
  LanguageModelV3Content,
  LanguageModelV3GenerateResult,
  LanguageModelV3Prompt,
  LanguageModelV3StreamPart,
} from '@ai-sdk/provider';
import { APICallError } from 'ai';
import { MockLanguageModelV3, convertArrayToReadableStream } from 'ai/test';

/** What the scripted model answers to one step: content, an error to throw, or a step that waits for its abort. */
export type Step =
  | {
      content: LanguageModelV3Content[];
      usage?: Partial<{ input: number; output: number; cacheRead: number; cacheWrite: number; reasoning: number }>;
      modelId?: string;
    }
  | { error: unknown }
  | { hang: true };

export const text = (t: string): LanguageModelV3Content => ({ type: 'text', text: t });
export const call = (id: string, toolName: string, input: unknown): LanguageModelV3Content => ({
  type: 'tool-call',
  toolCallId: id,
  toolName,
  input: typeof input === 'string' ? input : JSON.stringify(input),
});

export const apiError = (
  statusCode: number,
  headers: Record<string, string> = {},
  isRetryable?: boolean,
): APICallError =>
  new APICallError({
    message: statusCode === 429 ? 'Rate limit reached' : `HTTP ${statusCode}`,
    url: 'http://127.0.0.1/v1/chat',
    requestBodyValues: {},
    statusCode,
    responseHeaders: headers,
    ...(isRetryable === undefined ? {} : { isRetryable }),
  });

/**
 * Checks a prompt the way the providers' APIs do, answering 400 like they would: every tool
 * call of an assistant message answered exactly once by the tool messages right after it, and
 * no result for a call nobody made.
 */
export function checkPrompt(prompt: LanguageModelV3Prompt): void {
  const reject = (message: string): never => {
    throw new APICallError({
      message,
      url: 'http://127.0.0.1/v1/chat',
      requestBodyValues: prompt,
      statusCode: 400,
      isRetryable: false,
    });
  };
  let open: Set<string> | undefined;
  for (const message of prompt) {
    if (message.role === 'tool') {
      for (const part of message.content) {
        if (part.type !== 'tool-result') continue;
        if (open === undefined || !open.delete(part.toolCallId))
          reject(`tool result for unknown or already answered call ${part.toolCallId}`);
      }
      continue;
    }
    if (open !== undefined && open.size > 0) reject(`tool calls ${[...open].join(', ')} have no tool result`);
    open =
      message.role === 'assistant'
        ? new Set(message.content.flatMap((p) => (p.type === 'tool-call' ? [p.toolCallId] : [])))
        : undefined;
  }
  if (open !== undefined && open.size > 0) reject(`tool calls ${[...open].join(', ')} have no tool result`);
}

function result(step: Extract<Step, { content: unknown }>): LanguageModelV3GenerateResult {
  const u = step.usage ?? {};
  const input = u.input ?? 10;
  const output = u.output ?? 5;
  return {
    content: step.content,
    finishReason: step.content.some((c) => c.type === 'tool-call')
      ? { unified: 'tool-calls', raw: 'tool_calls' }
      : { unified: 'stop', raw: 'stop' },
    usage: {
      inputTokens: {
        total: input,
        noCache: input - (u.cacheRead ?? 0) - (u.cacheWrite ?? 0),
        cacheRead: u.cacheRead,
        cacheWrite: u.cacheWrite,
      },
      outputTokens: { total: output, text: output - (u.reasoning ?? 0), reasoning: u.reasoning },
    },
    warnings: [],
    response: { modelId: step.modelId ?? 'mock-model-2026-01-01' },
  };
}

/** A `MockLanguageModelV3` that answers steps in order (generate or stream), checks every prompt, and records them. */
export function scriptedModel(steps: Step[]): MockLanguageModelV3 & { prompts: LanguageModelV3Prompt[] } {
  const queue = [...steps];
  const prompts: LanguageModelV3Prompt[] = [];
  const next = async (options: LanguageModelV3CallOptions): Promise<Extract<Step, { content: unknown }>> => {
    prompts.push(structuredClone(options.prompt));
    checkPrompt(options.prompt);
    const step = queue.shift();
    if (step === undefined) throw new Error('the scripted model has no step left');
    if ('error' in step) throw step.error;
    if ('hang' in step) {
      return new Promise((_resolve, reject) => {
        const signal = options.abortSignal;
        if (signal === undefined) return reject(new Error('a hanging step needs an abort signal'));
        signal.addEventListener('abort', () => reject(signal.reason), { once: true });
      });
    }
    return step;
  };
  const model = new MockLanguageModelV3({
    modelId: 'mock-model',
    doGenerate: async (options) => result(await next(options)),
    doStream: async (options) => {
      const r = result(await next(options));
      const parts: LanguageModelV3StreamPart[] = [
        { type: 'stream-start', warnings: [] },
        { type: 'response-metadata', modelId: r.response?.modelId },
      ];
      r.content.forEach((c, i) => {
        if (c.type === 'text') {
          parts.push({ type: 'text-start', id: `t${i}` });
          // Two deltas per text, so streaming is seen as pieces.
          const half = Math.ceil(c.text.length / 2);
          parts.push(
            { type: 'text-delta', id: `t${i}`, delta: c.text.slice(0, half) },
            { type: 'text-delta', id: `t${i}`, delta: c.text.slice(half) },
          );
          parts.push({ type: 'text-end', id: `t${i}` });
        } else if (c.type === 'tool-call') {
          parts.push(c);
        }
      });
      parts.push({ type: 'finish', finishReason: r.finishReason, usage: r.usage });
      return { stream: convertArrayToReadableStream(parts) };
    },
  });
  return Object.assign(model, { prompts });
}
