/**
 * An attempt of a distributed run that another attempt took over: its job lock expired while its
 * worker lived on (a stall — a blocked event loop, a partition — longer than `lockDurationMs`),
 * BullMQ handed the job to another worker, and that attempt took the run over. The Redis budget
 * fences the earlier attempt: its charges count (the money was spent), but it reserves nothing,
 * so its next call is not made and its run ends with this error. Its report is dropped: the
 * attempt that took over reports the run.
 */
export class TakenOverError extends Error {
  override readonly name = 'TakenOverError';
  readonly code = 'taken_over' as const;

  constructor(
    /** The run's index in its batch. */
    readonly run: number,
    /** The attempt refused. */
    readonly attempt: number,
    /** The attempt that took the run over (the run's fence). */
    readonly by: number,
  ) {
    super(
      `run ${run}: attempt ${attempt} was taken over by attempt ${by} (its job lock expired while its worker lived on, a stall longer than lockDurationMs); its spend counts, and it makes no further call`,
    );
  }
}
