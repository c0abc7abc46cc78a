/** A wrong combination of options, reported like commander's own usage errors. */
export class UsageError extends Error {}
