// The model of the money protocol (lib/integrations/bullmq/model/budget.pml) catches the bugs
// it is there to catch: each deliberately broken variant — a past bug of the protocol, or a
// step taken out — fails with a counterexample, while the same bound without the break holds.
import { checkModel } from '../helpers/spinModel';

/** Each broken variant, and the check its counterexample breaks. */
const BROKEN: Array<[string, RegExp]> = [
  // A takeover that charged the lost attempt but left its holds in Redis for good.
  ['broken-takeover-no-release', /runHeld\[r\]==0/],
  // A takeover that lets go of the holds a step before the charge: another run's call fits in between.
  ['broken-takeover-split', /worst<=cap/],
  // A hold let go twice (a run's end releasing its last call's hold again): another run's hold freed.
  ['broken-release-twice', /worst<=cap/],
  // The final call's kept hold let go a step early: another run takes the room, the final call is refused.
  ['broken-wrap-early', /kept&&\(wmode==2\)/],
  // A resume that counts only the last attempt's reserve lines.
  ['broken-resume-last', /rec==h/],
  // A reserve that does not check spent + held + hold against the cap.
  ['broken-no-hold-check', /worst<=cap/],
  // settle() as it was: a reservation whose reply was lost kept its hold.
  ['broken-settle-keeps', /runHeld\[r\]==0/],
  // A run reported lost as it was: its holds kept in Redis.
  ['broken-lost-keeps', /runHeld\[r\]==0/],
  // With no store, a retried attempt that does not write the earlier one off: its settle frees money never charged.
  ['broken-nostore-keeps', /worst<=cap/],
  // The zombie of issue 55: a worker whose job lock expired lives on beside the attempt that took
  // its run over. STEP with no fence: its settle lets go of the other attempt's holds.
  ['broken-no-fence', /worst<=cap/],
  // A takeover that lets go of the earlier attempt's call holds: a call it had reserved still leaves.
  ['broken-takeover-lets-go', /worst<=cap/],
  // A fenced charge added to the hold its takeover charged: Redis counts the call twice, past the cap.
  ['broken-no-credit', /spent<=cap/],
  // RECORD with no fence: the attempt taken over reports the run, not the one that took it over.
  ['broken-record-no-fence', /reportAtt\[r\]==started\[r\]/],
];

describe('the money model: each broken variant fails with a counterexample', () => {
  it.each(BROKEN)(
    '%s is violated, with a trail',
    (name, check) => {
      const { code, output } = checkModel(name);
      expect(output).toMatch(new RegExp(`^${name}: VIOLATED \\(pan:1: assertion violated`, 'm'));
      expect(output).toMatch(check);
      // The counterexample: spin -t replays the steps of each process up to the failing assertion.
      expect(output).toContain('-- counterexample');
      expect(output).toMatch(/proc\s+\d+ \(Worker:1\) budget\.pml:\d+/);
      expect(output).toMatch(/spin: text of failed assertion/);
      expect(code).toBe(1);
    },
    180_000,
  );

  it.each(BROKEN.map(([name]) => [name]))(
    'the same bound without the break holds (correct:%s)',
    (name) => {
      const { code, output } = checkModel(`correct:${name}`);
      expect(output).toMatch(new RegExp(`^correct:${name}: holds \\(\\d+ states`, 'm'));
      expect(code).toBe(0);
    },
    180_000,
  );
});
