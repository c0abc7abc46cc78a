// What the cap does not survive, pinned (docs/cap-guarantees.md, "What is assumed"): outside
// the protocol's assumptions the model finds the cap crossed. Redis with `appendfsync everysec`
// can lose its last write in a restart; a worker whose job lock expired while it lives on (a
// zombie) goes on beside the attempt that took its run over — the open finding of issue 55.
// Should the protocol come to survive one of them, its test here fails: move it to check:model.
import { checkModel } from '../helpers/spinModel';

describe("the money model outside the protocol's assumptions", () => {
  it.each([['restart-everysec'], ['zombie']])(
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
