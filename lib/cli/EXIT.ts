/**
 * Exit codes: 0 all good (`diff`: the two are the same), 1 the history has problems
 * (`validate`, `inspect --exit-code`) or the two differ (`diff`), 2 the command could not run
 * (a file that cannot be read, a bad argument).
 */
export const EXIT = { ok: 0, problems: 1, differs: 1, error: 2 } as const;
