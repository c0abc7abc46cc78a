import { InvalidArgumentError } from './InvalidArgumentError';

/**
 * An options object had a key the function does not take: most often a slip (`totals`,
 * `historydir`) that would otherwise be dropped and leave, say, a batch with no cap. It names
 * the key, where it was given, and the nearest known name when one is close:
 * ``Unknown option `totals` of runBatch(); did you mean `total`?``
 */
export class UnknownOptionError extends InvalidArgumentError {
  constructor(
    /** The key as given, with its path (`totals`, `perRun.maxCost`). */
    readonly option: string,
    /** Where it was given (`runBatch()`, `new StepMirror()`). */
    readonly where: string,
    /** The nearest known name, when one is close enough to be what was meant. */
    readonly suggestion: string | undefined,
    value: unknown,
  ) {
    super(option, `a known option of ${where}`, value);
    this.message =
      `Unknown option \`${option}\` of ${where}` +
      (suggestion === undefined ? '' : `; did you mean \`${suggestion}\`?`);
  }
}
