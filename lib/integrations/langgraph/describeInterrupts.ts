/** Why a graph stopped at an `interrupt()`, in words: the interrupts' values, joined (a string as it is, anything else as JSON). */
export function describeInterrupts(interrupts: unknown): string {
  if (!Array.isArray(interrupts) || interrupts.length === 0) return 'the graph interrupted';
  return interrupts
    .map((i) => {
      const value = (i as { value?: unknown })?.value;
      return typeof value === 'string' ? value : JSON.stringify(value);
    })
    .join('; ');
}
