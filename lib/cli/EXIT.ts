/** Exit codes: 0 all good, 1 the history has problems (`validate`), 2 the command could not run. */
export const EXIT = { ok: 0, problems: 1, error: 2 } as const;
