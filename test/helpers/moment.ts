// Moments a test waits for in code it does not drive: reached by the code under test (a hook, a
// tool, a sleep), or a figure polled until it holds. Each wait is bounded and says what never came.

/** A moment the code under test reaches, and the test waits for, within 20 s. */
export function moment(what: string): { reached: () => void; wait: () => Promise<void> } {
  let reached!: () => void;
  const at = new Promise<void>((resolve) => (reached = resolve));
  return {
    reached: () => reached(),
    wait: () =>
      Promise.race([
        at,
        new Promise<void>((_, reject) => setTimeout(() => reject(new Error(`never reached: ${what}`)), 20_000).unref()),
      ]),
  };
}

/** Polls `condition` (a figure the code under test moves) until it holds, within 20 s. */
export async function until(what: string, condition: () => boolean | Promise<boolean>): Promise<void> {
  const end = Date.now() + 20_000;
  while (!(await condition())) {
    if (Date.now() > end) throw new Error(`never came: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
