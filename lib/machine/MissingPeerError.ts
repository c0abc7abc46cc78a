import { StateMachineError } from './StateMachineError';

/** An optional peer dependency, with the range of it the package supports (its `peerDependencies`). */
export interface PeerRange {
  /** The package's name on the registry, as `npm install` takes it. */
  name: string;
  /** The versions supported, e.g. `^0.1.8`. */
  range: string;
}

/**
 * A subpath (`agent-state-machine/pricing`, `/bullmq`, …) was imported without the optional
 * peer dependencies it loads. One line names each missing package, its supported range and the
 * command that installs it; `cause` keeps the error Node's loader threw.
 */
export class MissingPeerError extends StateMachineError {
  readonly code = 'missing_peer' as const;

  constructor(
    /** The subpath imported, e.g. `agent-state-machine/pricing`. */
    readonly subpath: string,
    /** The peers it loads that are not installed, at least one. */
    readonly missing: readonly PeerRange[],
    options?: { cause?: unknown },
  ) {
    const named = missing.map((p) => `${p.name} (${p.range})`).join(' and ');
    const which = missing.length === 1 ? 'which is' : 'which are';
    super(
      `${subpath} needs the optional peer dependency ${named}, ${which} not installed: ` +
        `npm install ${missing.map((p) => p.name).join(' ')}`,
      options,
    );
  }
}
