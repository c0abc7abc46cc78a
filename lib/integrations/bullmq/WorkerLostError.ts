/**
 * A distributed run whose worker stopped (killed, crashed, lost its Redis connection for
 * longer than its job lock) before reporting it. Its spend up to then is in the run's usage
 * and in the batch budget. It is not run again unless the batch allows `retryLostRuns`.
 */
export class WorkerLostError extends Error {
  override readonly name = 'WorkerLostError';
  readonly code = 'worker_lost' as const;

  constructor(
    /** The worker that had the run. */
    readonly worker: string,
    /** How many times the run was started. */
    readonly attempts: number,
  ) {
    super(
      `worker lost: ${worker} stopped holding the run's job lock before reporting it (started ${attempts} time${attempts === 1 ? '' : 's'})`,
    );
  }
}
