import { createRequire } from 'node:module';
import { MissingPeerError } from './MissingPeerError';

/** Node's codes for a module it cannot find: `import` (ESM) and `require` (CommonJS). */
const NOT_FOUND = new Set(['ERR_MODULE_NOT_FOUND', 'MODULE_NOT_FOUND']);

const codeOf = (error: unknown): unknown =>
  typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;

/**
 * What a subpath's entry throws when loading its code failed with `error`: a
 * {@link MissingPeerError} naming every peer of `peers` (name → range) that cannot be resolved
 * from `from` (the entry's file or URL), when `error` is Node's "cannot find module" and some
 * are missing; `error` itself otherwise (a failure that is not a missing peer is not hidden).
 * Called only after the load failed, so a subpath whose peers are present pays nothing.
 */
export function peerLoadError(
  error: unknown,
  subpath: string,
  peers: Readonly<Record<string, string>>,
  from: string,
): unknown {
  if (!NOT_FOUND.has(codeOf(error) as string)) return error;
  const require = createRequire(from);
  const missing = Object.entries(peers)
    .filter(([name]) => {
      try {
        // package.json rather than the main file: present whatever the package's exports serve.
        require.resolve(`${name}/package.json`);
        return false;
      } catch (probe) {
        // ERR_PACKAGE_PATH_NOT_EXPORTED: installed, with an exports map that hides package.json.
        return NOT_FOUND.has(codeOf(probe) as string);
      }
    })
    .map(([name, range]) => ({ name, range }));
  return missing.length === 0 ? error : new MissingPeerError(subpath, missing, { cause: error });
}
