// Which chat models' own retries the LangGraph mirror makes itself, and which it refuses.
import { ChatOpenAI } from '@langchain/openai';
import {
  callerRetriesOf,
  retriesOfCall,
  unseenRetries,
  RETRIES_MADE_BY_MIRROR,
} from '../../../lib/integrations/langgraph/callerRetries';

const openai = (more: Record<string, unknown> = {}) =>
  new ChatOpenAI({ model: 'gpt-local', apiKey: 'sk-local', ...more });

describe('callerRetriesOf', () => {
  it("makes ChatOpenAI's caller retries (6 by default, else its maxRetries), 0 included", () => {
    expect(callerRetriesOf(openai(), 'model')?.retries).toBe(6);
    expect(callerRetriesOf(openai({ maxRetries: 2 }), 'model')?.retries).toBe(2);
    // Still sent with maxRetries: 0, so that a call option stating more (withConfig) cannot retry unseen.
    expect(callerRetriesOf(openai({ maxRetries: 0 }), 'model')?.retries).toBe(0);
  });

  it("takes a call's own maxRetries option over its model's", () => {
    const retries = callerRetriesOf(openai({ maxRetries: 0 }), 'model')!;
    expect(retriesOfCall(retries, { maxRetries: 2 }).retries).toBe(2);
    expect(retriesOfCall(retries, { signal: undefined }).retries).toBe(0);
    expect(retriesOfCall(retries, undefined).retries).toBe(0);
  });

  it("asks the caller's own failed-attempt handler whether it would retry", () => {
    const retries = callerRetriesOf(openai(), 'model')!;
    expect(retries.wouldRetry(Object.assign(new Error('oops'), { status: 500 }))).toBe(true);
    expect(retries.wouldRetry(Object.assign(new Error('bad'), { status: 400 }))).toBe(false);
    expect(retries.wouldRetry(Object.assign(new Error('Rate limit'), { status: 429 }))).toBe(false);
  });

  it('leaves a model that sends nothing through the AsyncCaller as it is', () => {
    expect(callerRetriesOf({ _generate: () => undefined, caller: { maxRetries: 6 } }, 'model')).toBeUndefined();
  });

  it('refuses, by name, a model of another provider whose caller retries', () => {
    class ChatElsewhere {
      caller = { maxRetries: 6 };
      completionWithRetry(): void {}
    }
    expect(() => callerRetriesOf(new ChatElsewhere(), 'model')).toThrow(
      /`model \(ChatElsewhere\) maxRetries` to be 0: .*construct it with maxRetries: 0.*got `6`/,
    );
    const quiet = Object.assign(new ChatElsewhere(), { caller: { maxRetries: 0 } });
    expect(callerRetriesOf(quiet, 'model')).toBeUndefined();
  });
});

describe('unseenRetries', () => {
  it('names a ChatOpenAI a graph calls unwrapped with caller retries; passes a wrapped one, one with maxRetries 0, and other models', () => {
    expect(unseenRetries(openai().toJSON(), {})?.message).toMatch(/got `6`/);
    expect(unseenRetries(openai({ maxRetries: 3 }).toJSON(), {})?.message).toMatch(/got `3`/);
    expect(unseenRetries(openai({ maxRetries: 0 }).toJSON(), {})).toBeUndefined();
    expect(unseenRetries(openai().toJSON(), { [RETRIES_MADE_BY_MIRROR]: true })).toBeUndefined();
    expect(
      unseenRetries({ id: ['langchain', 'chat_models', 'fake', 'FakeListChatModel'], kwargs: {} }, {}),
    ).toBeUndefined();
  });
});
