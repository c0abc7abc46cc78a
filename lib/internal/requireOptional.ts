/**
 * Loads the dependency `name` when it is first needed instead of when the main entry is
 * imported: winston (the default logger), cli-progress (the progress line) and date-fns's
 * `format` (times in printed histories) were most of the main entry's cold start, and a run
 * with `logger: false` and no progress line needs none of them (bench `coldstart`). The ESM
 * build defines `require` for this (tsup.config.ts, its banner).
 */
export function requireOptional<T>(name: 'winston' | 'cli-progress' | 'date-fns/format'): T {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a synchronous load at first use, in both builds
  return require(name) as T;
}
