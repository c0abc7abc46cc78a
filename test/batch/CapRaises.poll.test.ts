import { Budget } from '../../lib/agent/money/Budget';
import { CapRaises, RAISE_POLL_MS } from '../../lib/batch/raises/CapRaises';
import type { RaiseBox } from '../../lib/batch/raises/RaiseBox';
import type { RaiseRequest } from '../../lib/batch/keeping/raiseRequests';

// How often a pausing batch asks its raise box (a folder's raise file, or its store) for raises:
// every RAISE_POLL_MS while a run waits at the cap, every 2 s while none does, and at once as a
// run pauses — so a store is not asked five times a second for a whole batch, and a raise asked
// before the pause is taken as it comes.

type Asked = RaiseRequest & { line: number };

function countingBox(requests: Asked[] = []): RaiseBox & { reads: number } {
  const box = {
    where: 'the test box',
    reads: 0,
    read: (from: number) => {
      box.reads++;
      return Promise.resolve({ requests: requests.slice(from), lines: requests.length, problems: [] });
    },
    append: () => Promise.resolve(),
    notePause: () => Promise.resolve(),
    readPause: () => Promise.resolve(undefined),
  };
  return box;
}

function raisesOf(box: RaiseBox) {
  const pool = new Budget({ maxCostUsd: 1 }, { label: 'pool', whenSpent: 'pause' });
  let raised = 0;
  const raises = new CapRaises({
    pool,
    clock: Date.now,
    box,
    onPause: undefined,
    onRaise: () => raised++,
    log: undefined,
  });
  return { raises, pool, raised: () => raised };
}

beforeEach(() => jest.useFakeTimers());
afterEach(() => jest.useRealTimers());

it('reads the box every 2 s while no run is paused, every RAISE_POLL_MS while one is, and at once as one pauses', async () => {
  const box = countingBox();
  const { raises } = raisesOf(box);
  await raises.start();
  expect(box.reads).toBe(1);
  await jest.advanceTimersByTimeAsync(RAISE_POLL_MS * 10);
  expect(box.reads).toBe(2);
  raises.paused();
  await jest.advanceTimersByTimeAsync(0);
  expect(box.reads).toBe(3);
  await jest.advanceTimersByTimeAsync(RAISE_POLL_MS * 5);
  expect(box.reads).toBe(8);
  await raises.stop();
  await jest.advanceTimersByTimeAsync(RAISE_POLL_MS * 20);
  expect(box.reads).toBe(8);
});

it('takes a raise asked before the pause as the run pauses, then reads slowly again', async () => {
  const requests: Asked[] = [];
  const box = countingBox(requests);
  const { raises, pool, raised } = raisesOf(box);
  await raises.start();
  requests.push({ line: 1, maxCostUsd: 2, at: 0 });
  raises.paused();
  await jest.advanceTimersByTimeAsync(0);
  expect(raised()).toBe(1);
  expect(pool.limits.maxCostUsd).toBe(2);
  const before = box.reads;
  await jest.advanceTimersByTimeAsync(RAISE_POLL_MS * 9);
  expect(box.reads - before).toBeLessThanOrEqual(1);
  await raises.stop();
});
