// What the cap does not survive, pinned (docs/cap-guarantees.md, "What is assumed"): outside
// the protocol's assumptions the model finds the cap crossed. Redis with `appendfsync everysec`
// can lose its last write in a restart. (A worker whose job lock expired while it lives on — a
// zombie, issue 55 — was here until STEP fenced it: `zombie` is among check:model's scenarios.)
// Should the protocol come to survive one of them, its test here fails: move it to check:model.
import { checkModel } from '../helpers/spinModel';

describe("the money model outside the protocol's assumptions", () => {
  it.each([['restart-everysec']])(
    '%s: the cap can be crossed, and spin shows how',
    (name) => {
      const { code, output } = checkModel(name);
      expect(output).toMatch(new RegExp(`^${name}: VIOLATED \\(pan:1: assertion violated \\(\\(?worst<=cap`, 'm'));
      expect(output).toContain('-- counterexample');
      expect(code).toBe(1);
    },
    180_000,
  );
});
