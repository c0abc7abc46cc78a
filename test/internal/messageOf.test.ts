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
