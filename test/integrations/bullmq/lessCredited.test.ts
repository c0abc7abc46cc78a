// A taken-over run's reasons less the calls the takeovers' credit holds again: each lost
// attempt's last call, when its money was uncertain, named by the credit instead. Pure.
import type { AttemptSpend } from 'agent-state-machine/history';
import { lessCredited, type RunMoneyInRedis } from '../../../lib/integrations/bullmq/takeoverCredit';

const IN_FLIGHT = 'reserved, and no response recorded (in flight when the file ended)';
const FAILED = 'it failed after the request may have left (HTTP 500)';
const money = (creditUsd: number): RunMoneyInRedis => ({
  costUsd: 0.03,
  uncertainUsd: 0.03,
  releasedUsd: 0,
  creditUsd,
  unpricedCalls: 0,
});
const lost = (lastCallUncertainWhy: string | undefined): AttemptSpend =>
  ({ lastCallUncertainWhy }) as unknown as AttemptSpend;

it('takes one call off the reason of each lost attempt whose last call was uncertain, and drops a reason left with none', () => {
  const reasons = [
    { why: FAILED, calls: 2 },
    { why: IN_FLIGHT, calls: 1 },
  ];
  expect(lessCredited(reasons, [lost(FAILED), lost(IN_FLIGHT)], money(0.02))).toEqual([{ why: FAILED, calls: 1 }]);
  // A lost attempt whose last call was billed: the credit names a call no other reason does.
  expect(lessCredited(reasons, [lost(undefined)], money(0.01))).toEqual(reasons);
});

it('takes nothing off when the takeovers charged no credit (no cap held the calls), or the reason is not there', () => {
  const reasons = [{ why: IN_FLIGHT, calls: 1 }];
  expect(lessCredited(reasons, [lost(IN_FLIGHT)], money(0))).toEqual(reasons);
  expect(lessCredited(reasons, [lost(FAILED)], money(0.01))).toEqual(reasons);
  expect(lessCredited([], [lost(IN_FLIGHT)], money(0.01))).toEqual([]);
});
