/** A clock tests move by hand: `clock.now` is what the machine reads. */
export function manualClock(start = Date.UTC(2026, 10, 22, 12, 0, 0)): {
  now: () => number;
  advance: (ms: number) => void;
  set: (ms: number) => void;
} {
  let t = start;
  return {
    now: () => t,
    advance: (ms) => {
      t += ms;
    },
    set: (ms) => {
      t = ms;
    },
  };
}
