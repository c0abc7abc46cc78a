/** Does nothing: the listener or catch for an error said elsewhere, or one nobody can act on. */
export function ignore(): void {}
