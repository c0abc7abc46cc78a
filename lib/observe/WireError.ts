/**
 * A model call the provider answered with an error status, as `meterFetch` reports it to the
 * mirror: the status decides by the billing rules whether its hold is released (a 429: not
 * billed) or charged as uncertain (a 500 after the request was sent).
 */
export class WireError extends Error {
  override readonly name = 'WireError';
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}
