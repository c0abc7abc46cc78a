import { messageOf } from '../internal/messageOf';

/**
 * `agent-state-machine/bullmq`, loaded when a command is given `--redis` (the CLI runs without
 * BullMQ installed): its missing peers are named by the subpath itself, with the npm install
 * that adds them; any other failure to load it names the subpath.
 */
export async function loadBullmq<T>(): Promise<T> {
  // Not a literal: the bundle leaves it to Node, which finds the package's own subpath export.
  const specifier = 'agent-state-machine/bullmq';
  try {
    return (await import(specifier)) as T;
  } catch (error) {
    const missingPeer = (error as { code?: unknown }).code === 'missing_peer';
    throw new Error(`--redis: ${missingPeer ? '' : `cannot load ${specifier}: `}${messageOf(error)}`, {
      cause: error,
    });
  }
}
