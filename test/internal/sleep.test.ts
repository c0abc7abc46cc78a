import { sleep } from '../../lib/internal/sleep';

describe('sleep()', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('resolves after the time given', async () => {
    let done = false;
    void sleep(1000).then(() => (done = true));
    await jest.advanceTimersByTimeAsync(999);
    expect(done).toBe(false);
    await jest.advanceTimersByTimeAsync(1);
    expect(done).toBe(true);
  });

  it('resolves early, without rejecting, when the signal aborts, and clears its timer', async () => {
    const controller = new AbortController();
    const waiting = sleep(60_000, controller.signal);
    controller.abort();
    await expect(waiting).resolves.toBeUndefined();
    expect(jest.getTimerCount()).toBe(0);
    await expect(sleep(10, controller.signal)).resolves.toBeUndefined();
  });
});

describe("sleep() with delays past setTimeout's limit", () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('waits the whole 3e9 ms instead of firing after 1 ms', async () => {
    let done = false;
    void sleep(3e9).then(() => (done = true));
    await jest.advanceTimersByTimeAsync(10);
    expect(done).toBe(false);
    await jest.advanceTimersByTimeAsync(3e9 - 20);
    expect(done).toBe(false);
    await jest.advanceTimersByTimeAsync(10);
    expect(done).toBe(true);
  });

  it('an Infinity wait ends only with the abort', async () => {
    const controller = new AbortController();
    let done = false;
    void sleep(Infinity, controller.signal).then(() => (done = true));
    await jest.advanceTimersByTimeAsync(5e9);
    expect(done).toBe(false);
    controller.abort();
    await Promise.resolve();
    await Promise.resolve();
    expect(done).toBe(true);
  });
});
