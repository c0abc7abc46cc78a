// A streamed call the SDK gives up on mid-answer: cancelling the mirror's stream cancels the
// provider's at once, while a read is still waiting on it (not when its next part comes, which
// may be never), and the call stays in flight for the run's end to charge at its hold.
import { MockLanguageModelV3 } from 'ai/test';
import type { LanguageModelV3StreamPart } from '@ai-sdk/provider';
import type { Pricing } from 'agent-state-machine';
import { mirrorAISDK } from '../../../lib/integrations/ai-sdk';

// $0.001 a token: the call's bound (its prompt counted, 100 output tokens) is held whole.
const pricing: Pricing = (u) => ((u.inputTokens ?? 0) + (u.outputTokens ?? 0)) * 0.001;

/** A provider stream that sends its start and one delta, then waits for a part that never comes. */
function stalledModel() {
  const cancelled: unknown[] = [];
  const model = new MockLanguageModelV3({
    modelId: 'mock-model',
    doStream: async () => ({
      stream: new ReadableStream<LanguageModelV3StreamPart>({
        start(controller) {
          controller.enqueue({ type: 'stream-start', warnings: [] });
          controller.enqueue({ type: 'text-start', id: 't' });
          controller.enqueue({ type: 'text-delta', id: 't', delta: 'thinking' });
        },
        cancel(reason) {
          cancelled.push(reason);
        },
      }),
    }),
  });
  return { model, cancelled };
}

describe('mirrorAISDK: a streamed call cancelled mid-answer', () => {
  it("cancels the provider's stream while a read waits on it, and the run's end charges the call at its hold", async () => {
    const { model, cancelled } = stalledModel();
    const m = mirrorAISDK({ model, pricing, budget: { maxCostUsd: 1, strict: true }, logger: false });
    const wrapped = m.settings.model as unknown as {
      doStream(o: unknown): Promise<{ stream: ReadableStream<{ type: string }> }>;
    };
    const { stream } = await wrapped.doStream({
      prompt: [{ role: 'user', content: [{ type: 'text', text: 'go' }] }],
      maxOutputTokens: 100,
    });
    const reader = stream.getReader();
    const seen: string[] = [];
    for (let i = 0; i < 3; i++) seen.push((await reader.read()).value!.type);
    expect(seen).toEqual(['stream-start', 'text-start', 'text-delta']);
    // The next read waits on the provider, which sends nothing more: the SDK gives up on it.
    const waiting = reader.read();
    await reader.cancel('the caller stopped reading');
    expect(cancelled).toEqual(['the caller stopped reading']);
    expect(await waiting).toEqual({ done: true, value: undefined });
    // No answer came whole: the attempt is in flight, and the run's end charges it at its hold.
    expect(m.mirror.usage.costUsd).toBe(0);
    const ended = m.mirror.runAborted('the caller stopped reading');
    expect(ended.outcome).toBe('cancelled');
    expect(m.mirror.usage.uncertainUsd).toBeGreaterThan(0.1);
    expect(m.mirror.usage.costUsd).toBe(m.mirror.usage.uncertainUsd);
  });
});
