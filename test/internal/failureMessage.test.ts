import { errorStatus, failureMessage } from '../../lib/internal/failureMessage';

describe('failureMessage', () => {
  it('puts the status of an error that keeps it apart (the AI SDK’s statusCode) in front of its message', () => {
    expect(failureMessage(Object.assign(new Error('Rate limit reached'), { statusCode: 429 }))).toBe(
      '429 Rate limit reached',
    );
    expect(failureMessage(Object.assign(new Error(''), { statusCode: 503 }))).toBe('503');
  });

  it('leaves a message that already starts with its status as it is (openai’s APIError)', () => {
    expect(failureMessage(Object.assign(new Error('429 Rate limit reached'), { status: 429 }))).toBe(
      '429 Rate limit reached',
    );
  });

  it('takes no status that is not an HTTP status, and says anything thrown', () => {
    expect(failureMessage(Object.assign(new Error('odd'), { status: 'failed', statusCode: 42 }))).toBe('odd');
    expect(failureMessage('plain')).toBe('plain');
    const hostile = {
      message: 'hostile',
      get status(): number {
        throw new Error('no');
      },
    };
    expect(failureMessage(hostile)).toBe('hostile');
    expect(errorStatus(hostile)).toBeUndefined();
    expect(errorStatus({ status: 500, statusCode: 429 })).toBe(500);
  });
});
