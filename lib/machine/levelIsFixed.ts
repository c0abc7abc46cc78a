/**
 * Whether a logger's `level` can never change: an own data property that can be neither
 * written nor redefined (the default logger's). A machine then reads it once, not on every
 * move, and the adapter's logger shim keeps it so. Internal; not exported by the package.
 */
export function levelIsFixed(logger: object): boolean {
  try {
    const own = Object.getOwnPropertyDescriptor(logger, 'level');
    return own !== undefined && 'value' in own && own.writable === false && own.configurable === false;
  } catch {
    // A proxy whose trap throws: nothing is known, so the level is read as usual.
    return false;
  }
}
