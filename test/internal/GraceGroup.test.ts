import { getEventListeners } from 'node:events';
import { GraceGroup } from '../../lib/internal/GraceGroup';

const noWait = async (): Promise<void> => undefined;

describe('GraceGroup', () => {
  it('.settle() gives the value, or the rejection, without rejecting', async () => {
    const group = new GraceGroup(new AbortController().signal, 100, noWait);
    await expect(group.settle(42)).resolves.toEqual({ kind: 'value', value: 42 });
    await expect(group.settle(Promise.resolve('ok'))).resolves.toEqual({ kind: 'value', value: 'ok' });
    await expect(group.settle(Promise.reject(new Error('late')))).resolves.toEqual({
      kind: 'threw',
      error: new Error('late'),
    });
    const thenable = { then: (resolve: (v: string) => void) => resolve('thenable') } as unknown as PromiseLike<string>;
    await expect(group.settle(thenable)).resolves.toEqual({ kind: 'value', value: 'thenable' });
  });

  it('.settle() adds no listener to the signal', async () => {
    const controller = new AbortController();
    const group = new GraceGroup(controller.signal, 100, noWait);
    const pending = group.settle(new Promise((resolve) => setImmediate(() => resolve('ok'))));
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    await expect(pending).resolves.toEqual({ kind: 'value', value: 'ok' });
  });

  it('.aborted() abandons every running operation that ignores the abort, after the grace', async () => {
    const controller = new AbortController();
    const waits: number[] = [];
    const group = new GraceGroup(controller.signal, 250, async (ms) => void waits.push(ms));
    const first = group.settle(new Promise<never>(() => undefined));
    const second = group.settle(new Promise<never>(() => undefined));
    controller.abort('stop');
    group.aborted();
    await expect(Promise.all([first, second])).resolves.toEqual([{ kind: 'abandoned' }, { kind: 'abandoned' }]);
    expect(waits).toEqual([250, 250]);
  });

  it('.aborted() leaves alone the operations that already settled', async () => {
    const controller = new AbortController();
    const waits: number[] = [];
    const group = new GraceGroup(controller.signal, 250, async (ms) => void waits.push(ms));
    await expect(group.settle(Promise.resolve('done'))).resolves.toEqual({ kind: 'value', value: 'done' });
    const running = group.settle(new Promise<never>(() => undefined));
    controller.abort('stop');
    group.aborted();
    await expect(running).resolves.toEqual({ kind: 'abandoned' });
    expect(waits).toEqual([250]);
  });

  it('.settle() gives an operation started after the abort its grace at once', async () => {
    const controller = new AbortController();
    controller.abort('stop');
    const waits: number[] = [];
    const group = new GraceGroup(controller.signal, 40, async (ms) => void waits.push(ms));
    await expect(group.settle(new Promise<never>(() => undefined))).resolves.toEqual({ kind: 'abandoned' });
    expect(waits).toEqual([40]);
  });

  it('lets an operation that stops through the signal, or finishes within the grace, win; and stops its grace timer', async () => {
    const controller = new AbortController();
    const graceSignals: AbortSignal[] = [];
    const group = new GraceGroup(controller.signal, 10_000, async (_ms, s) => {
      graceSignals.push(s!);
      await new Promise<void>((resolve) => s?.addEventListener('abort', () => resolve()));
    });
    const stops = group.settle(
      new Promise((_resolve, reject) =>
        controller.signal.addEventListener('abort', () => reject(new Error('aborted'))),
      ),
    );
    const finishes = group.settle(new Promise((resolve) => setImmediate(() => resolve('finished anyway'))));
    controller.abort('stop');
    group.aborted();
    await expect(stops).resolves.toEqual({ kind: 'threw', error: new Error('aborted') });
    await expect(finishes).resolves.toEqual({ kind: 'value', value: 'finished anyway' });
    expect(graceSignals).toHaveLength(2);
    expect(graceSignals.every((s) => s.aborted)).toBe(true);
  });
});
