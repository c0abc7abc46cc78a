import { getEventListeners } from 'node:events';
import { linkSignals } from '../../lib/internal/linkSignals';

describe('linkSignals', () => {
  it('aborts with the reason of the first source that aborts, then lets go of its sources', () => {
    const a = new AbortController();
    const b = new AbortController();
    const linked = new AbortController();
    linkSignals(linked, [a.signal, undefined, b.signal]);
    expect(linked.signal.aborted).toBe(false);
    expect(getEventListeners(a.signal, 'abort')).toHaveLength(1);
    b.abort('b stopped');
    expect(linked.signal.aborted).toBe(true);
    expect(linked.signal.reason).toBe('b stopped');
    expect(getEventListeners(a.signal, 'abort')).toHaveLength(0);
    a.abort('a stopped later');
    expect(linked.signal.reason).toBe('b stopped');
  });

  it('is aborted at once by a source aborted already, and listens to none', () => {
    const a = new AbortController();
    a.abort('gone');
    const b = new AbortController();
    const linked = new AbortController();
    linkSignals(linked, [b.signal, a.signal]);
    expect(linked.signal.reason).toBe('gone');
    expect(getEventListeners(b.signal, 'abort')).toHaveLength(0);
  });

  it('undone, it leaves its sources with no listener and no longer aborts on their account', () => {
    const a = new AbortController();
    const linked = new AbortController();
    const undo = linkSignals(linked, [a.signal]);
    undo();
    expect(getEventListeners(a.signal, 'abort')).toHaveLength(0);
    a.abort('late');
    expect(linked.signal.aborted).toBe(false);
  });

  it('gives the reason as reasonOf makes it', () => {
    const a = new AbortController();
    const linked = new AbortController();
    linkSignals(linked, [a.signal], (reason) => new Error(`stopped: ${String(reason)}`));
    a.abort('user');
    expect((linked.signal.reason as Error).message).toBe('stopped: user');
  });
});
