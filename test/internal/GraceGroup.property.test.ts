import fc from 'fast-check';
import { GraceGroup } from '../../lib/internal/GraceGroup';
import { settleWithGrace, type Settled } from '../../lib/internal/settleWithGrace';
import type { Sleep } from '../../lib/internal/sleep';

// Time in these scenarios is counted in event-loop turns (setImmediate hops), so that both
// ways of settling see the same order of events whatever the load on the machine.

type Op =
  | { kind: 'value'; hops: number }
  | { kind: 'reject'; hops: number }
  | { kind: 'plain' }
  | { kind: 'never' }
  | { kind: 'stopsOnAbort' };

/** When the signal aborts: never, before the operations start, or after some hops. */
type Abort = { kind: 'never' } | { kind: 'before' } | { kind: 'at'; hops: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('value' as const), hops: fc.nat(6) }),
  fc.record({ kind: fc.constant('reject' as const), hops: fc.nat(6) }),
  fc.constant({ kind: 'plain' as const }),
  fc.constant({ kind: 'never' as const }),
  fc.constant({ kind: 'stopsOnAbort' as const }),
);
const abortArb: fc.Arbitrary<Abort> = fc.oneof(
  fc.constant({ kind: 'never' as const }),
  fc.constant({ kind: 'before' as const }),
  fc.record({ kind: fc.constant('at' as const), hops: fc.nat(6) }),
);

const hops = (n: number): Promise<void> =>
  n <= 0 ? Promise.resolve() : new Promise((resolve) => setImmediate(() => void hops(n - 1).then(resolve)));

/** A grace that lasts `ms` hops, or until its signal aborts. */
const hopSleep: Sleep = (ms, signal) =>
  new Promise<void>((resolve) => {
    signal?.addEventListener('abort', () => resolve(), { once: true });
    void hops(ms).then(resolve);
  });

function start(op: Op, signal: AbortSignal, index: number): Promise<unknown> | unknown {
  switch (op.kind) {
    case 'value':
      return hops(op.hops).then(() => `value ${index}`);
    case 'reject':
      return hops(op.hops).then(() => Promise.reject(new Error(`error ${index}`)));
    case 'plain':
      return `plain ${index}`;
    case 'never':
      return new Promise(() => undefined);
    case 'stopsOnAbort':
      return new Promise((_resolve, reject) => {
        if (signal.aborted) reject(new Error(`stopped ${index}`));
        else signal.addEventListener('abort', () => reject(new Error(`stopped ${index}`)), { once: true });
      });
  }
}

/** Runs the operations side by side on one signal, each settled by `settle`, and aborts as told. */
async function scenario(
  ops: readonly Op[],
  abort: Abort,
  settle: (signal: AbortSignal, op: () => unknown) => Promise<Settled<unknown>>,
  onAbort: () => void,
  controller: AbortController,
): Promise<Settled<unknown>[]> {
  if (abort.kind === 'before') {
    controller.abort('before');
    onAbort();
  }
  const all = Promise.all(ops.map((op, i) => settle(controller.signal, () => start(op, controller.signal, i))));
  if (abort.kind === 'at') {
    await hops(abort.hops);
    controller.abort('at');
    onAbort();
  }
  return all;
}

/** Whether an operation's fate is decided: one settling on its own after the grace would race the grace's last macrotask. */
function decided(op: Op, abort: Abort, graceHops: number): boolean {
  // Without an abort, an operation that never settles would hang both alike.
  if (abort.kind === 'never') return op.kind !== 'never' && op.kind !== 'stopsOnAbort';
  if (op.kind !== 'value' && op.kind !== 'reject') return true;
  const abortAt = abort.kind === 'before' ? 0 : abort.hops;
  return op.hops <= abortAt + graceHops;
}

describe('GraceGroup against settleWithGrace (property-based)', () => {
  it('settles every operation the same way: value, throw or abandoned', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(opArb, { minLength: 1, maxLength: 4 }),
        abortArb,
        fc.nat(4),
        async (ops, abort, graceHops) => {
          fc.pre(ops.every((op) => decided(op, abort, graceHops)));
          const general = await scenario(
            ops,
            abort,
            (signal, op) => settleWithGrace(op, signal, graceHops, hopSleep),
            () => undefined,
            new AbortController(),
          );
          const controller = new AbortController();
          const group = new GraceGroup(controller.signal, graceHops, hopSleep);
          const grouped = await scenario(
            ops,
            abort,
            (_signal, op) => group.settle(op()),
            () => group.aborted(),
            controller,
          );
          expect(grouped).toEqual(general);
          if (abort.kind === 'never') expect(grouped.some((s) => s.kind === 'abandoned')).toBe(false);
        },
      ),
      { numRuns: 200 },
    );
  });
});
