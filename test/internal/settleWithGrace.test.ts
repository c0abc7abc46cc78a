import { settleWithGrace } from '../../lib/internal/settleWithGrace';

const noWait = async (): Promise<void> => undefined;

describe('settleWithGrace()', () => {
  it('returns the value, or the throw (sync or async), without rejecting', async () => {
    const signal = new AbortController().signal;
    await expect(settleWithGrace(() => 42, signal, 100, noWait)).resolves.toEqual({ kind: 'value', value: 42 });
    await expect(settleWithGrace(() => Promise.reject(new Error('late')), signal, 100, noWait)).resolves.toEqual({
      kind: 'threw',
      error: new Error('late'),
    });
    await expect(
      settleWithGrace(
        () => {
          throw new Error('early');
        },
        signal,
        100,
        noWait,
      ),
    ).resolves.toEqual({ kind: 'threw', error: new Error('early') });
  });

  it('abandons an operation that ignores the abort, after the grace it was given', async () => {
    const controller = new AbortController();
    const waits: number[] = [];
    const pending = settleWithGrace(
      () => new Promise<never>(() => undefined),
      controller.signal,
      250,
      async (ms) => void waits.push(ms),
    );
    controller.abort('stop');
    await expect(pending).resolves.toEqual({ kind: 'abandoned' });
    expect(waits).toEqual([250]);
  });

  it('lets an operation that finishes within the grace win', async () => {
    const controller = new AbortController();
    const pending = settleWithGrace(
      () => {
        controller.abort('stop');
        return 'finished anyway';
      },
      controller.signal,
      250,
      noWait,
    );
    await expect(pending).resolves.toEqual({ kind: 'value', value: 'finished anyway' });
  });

  it('stops the grace timer and its listener once the operation settles', async () => {
    const controller = new AbortController();
    let graceSignal: AbortSignal | undefined;
    const add = jest.spyOn(controller.signal, 'addEventListener');
    const remove = jest.spyOn(controller.signal, 'removeEventListener');
    const pending = settleWithGrace(
      () => new Promise((resolve) => setImmediate(() => resolve('ok'))),
      controller.signal,
      10_000,
      async (_ms, s) => {
        graceSignal = s;
        await new Promise<void>((resolve) => s?.addEventListener('abort', () => resolve()));
      },
    );
    controller.abort('stop');
    await expect(pending).resolves.toEqual({ kind: 'value', value: 'ok' });
    expect(graceSignal?.aborted).toBe(true);
    expect(remove).toHaveBeenCalledWith('abort', add.mock.calls[0]![1]);
  });
});
