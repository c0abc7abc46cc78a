/**
 * Base of every error this library throws on purpose. `code` is stable and meant for
 * programs (`switch (err.code)`); the message is for people.
 */
export abstract class StateMachineError extends Error {
  abstract readonly code: string;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}
