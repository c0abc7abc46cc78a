// A taken-over run's reasons with the calls the takeovers' credit charges again named by the
// credit alone: each lost attempt's call in flight, and the newest attempt's last call when its
// uncertain charge never reached Redis. Each call once. Pure.
import type { AttemptSpend } from 'agent-state-machine/history';
import { lessCredited, type RunMoneyInRedis } from '../../../lib/integrations/bullmq/takeoverCredit';

const IN_FLIGHT = 'reserved, and no response recorded (in flight when the file ended)';
const FAILED = 'it failed after the request may have left (HTTP 500)';
const NO_USAGE = 'the response reported no usage';
const money = (creditUsd: number): RunMoneyInRedis => ({
  costUsd: 0.03,
  uncertainUsd: 0.03,
  releasedUsd: 0,
  creditUsd,
  unpricedCalls: 0,
});
const lost = (lastCallUncertainWhy: string | undefined): AttemptSpend =>
  ({ lastCallUncertainWhy }) as unknown as AttemptSpend;
const credit = (calls: number, attempt = 3) => ({
  why: expect.stringMatching(attempt === 2 ? /^taken over: attempt 1's call/ : /^taken over: calls of attempts 1–2/),
  calls,
});

it("names each lost attempt's call in flight by the credit, as many calls as it took", () => {
  const reasons = [
    { why: FAILED, calls: 1 },
    { why: IN_FLIGHT, calls: 2 },
  ];
  expect(lessCredited(reasons, [lost(IN_FLIGHT), lost(IN_FLIGHT)], money(0.02), true, 3)).toEqual([
    credit(2),
    { why: FAILED, calls: 1 },
  ]);
});

it("names the newest attempt's last call by the credit only when its uncertain charge never reached Redis", () => {
  const reasons = [{ why: FAILED, calls: 2 }];
  expect(lessCredited(reasons, [lost(FAILED)], money(0.01), true, 2)).toEqual([
    credit(1, 2),
    { why: FAILED, calls: 1 },
  ]);
  // Its charge was sent (it reached Redis): the credit is another call's, or none; its reason stays.
  expect(lessCredited(reasons, [lost(FAILED)], money(0.01), false, 2)).toEqual(reasons);
  // An older attempt's last call charged at its hold: its own takeover's knowledge is gone; it keeps its reason.
  expect(lessCredited([{ why: NO_USAGE, calls: 1 }], [lost(NO_USAGE), lost(undefined)], money(0.01), true, 3)).toEqual([
    { why: NO_USAGE, calls: 1 },
  ]);
});

it('takes nothing when no credit is counted (no strict cap held the calls, or a late charge took its place)', () => {
  const reasons = [{ why: IN_FLIGHT, calls: 1 }];
  expect(lessCredited(reasons, [lost(IN_FLIGHT)], money(0), true, 2)).toEqual(reasons);
  expect(lessCredited(reasons, [lost(FAILED)], money(0.01), true, 2)).toEqual(reasons);
  expect(lessCredited([], [lost(IN_FLIGHT)], money(0.01), true, 2)).toEqual([]);
});
