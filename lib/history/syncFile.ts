import * as fs from 'node:fs';

/** fsync, where the file can be synced: a device or a pipe (EINVAL) has nothing to force to a disk. */
export function syncFile(fd: number): void {
  try {
    fs.fsyncSync(fd);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EINVAL' && code !== 'ENOTSUP') throw error;
  }
}
