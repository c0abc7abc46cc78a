import { messageOf } from '../../lib/internal/messageOf';

describe('messageOf()', () => {
  it('reads messages from errors, strings, error-like objects and anything else', () => {
    expect(messageOf(new Error('a'))).toBe('a');
    expect(messageOf('b')).toBe('b');
    expect(messageOf({ name: 'AbortError', message: 'c' })).toBe('c');
    expect(messageOf({ code: 7 })).toBe('{"code":7}');
    expect(messageOf(undefined)).toBe('undefined');
    expect(messageOf(Symbol('s'))).toBe('Symbol(s)');
  });
});

describe('messageOf() with unreadable values', () => {
  it('never throws for a null-prototype object with a cycle', () => {
    const hostile = Object.create(null) as Record<string, unknown>;
    hostile.self = hostile;
    expect(messageOf(hostile)).toBe('an unreadable [object Object] was thrown');
  });

  it('never throws for a message getter that throws', () => {
    const error = new Error('x');
    Object.defineProperty(error, 'message', {
      get: () => {
        throw new Error('no');
      },
    });
    expect(typeof messageOf(error)).toBe('string');
    const proxy = new Proxy(
      {},
      {
        get: () => {
          throw new Error('no');
        },
        getPrototypeOf: () => {
          throw new Error('no');
        },
      },
    );
    expect(typeof messageOf(proxy)).toBe('string');
  });
});
