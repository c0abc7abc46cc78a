import * as fs from 'node:fs';
import { messageOf } from '../internal/messageOf';
import { InvalidArgumentError } from '../machine/InvalidArgumentError';
import { HistoryFileError } from './HistoryFileError';

/** How much is read at once. */
const CHUNK_BYTES = 1024 * 1024;
/** Files up to this size are read in one synchronous read (see readBytes). */
const SMALL_FILE_BYTES = 256 * 1024;

/**
 * The input's bytes, a chunk at a time. A file is read into two buffers in turn, again and
 * again (a stream would allocate a fresh megabyte per read): the next read is under way while
 * the caller parses this chunk, which is only good until the step after.
 */
export async function* readBytes(
  path: string,
  input: AsyncIterable<Uint8Array> | undefined,
): AsyncGenerator<Buffer, void, undefined> {
  if (input !== undefined) {
    try {
      for await (const chunk of input) yield chunk instanceof Buffer ? chunk : Buffer.from(chunk);
    } catch (error) {
      throw readFailed(path, error);
    }
    return;
  }
  const stat = readableStat(path);
  // A small file is read at once: the thread pool's round trips to open, read and close it
  // (and wait between) cost more than the read itself (a resume reads each cut-off run's file).
  if (stat.isFile() && stat.size <= SMALL_FILE_BYTES) {
    let bytes: Buffer;
    try {
      bytes = fs.readFileSync(path);
    } catch (error) {
      throw readFailed(path, error);
    }
    if (bytes.length > 0) yield bytes;
    return;
  }
  let file: fs.promises.FileHandle;
  try {
    file = await fs.promises.open(path, 'r');
  } catch (error) {
    throw readFailed(path, error);
  }
  let buffer = Buffer.allocUnsafe(CHUNK_BYTES);
  let spare = Buffer.allocUnsafe(CHUNK_BYTES);
  const read = (buffer: Buffer): Promise<number> => {
    const reading = file.read(buffer, 0, CHUNK_BYTES, null).then(({ bytesRead }) => bytesRead);
    // Awaited on the next step; until then a failure must not count as unhandled.
    reading.catch(() => undefined);
    return reading;
  };
  let next: Promise<number> | undefined = read(buffer);
  try {
    for (;;) {
      let size: number;
      try {
        size = await next;
      } catch (error) {
        throw readFailed(path, error);
      } finally {
        next = undefined;
      }
      if (size === 0) return;
      next = read(spare);
      yield size === CHUNK_BYTES ? buffer : buffer.subarray(0, size);
      [buffer, spare] = [spare, buffer];
    }
  } finally {
    // A read still under way when the caller stops must end before the file is closed.
    if (next !== undefined) await next.catch(() => undefined);
    await file.close();
  }
}

/** The stat of a file to read, or a HistoryFileError that says why it cannot be read (missing, a directory). */
function readableStat(path: string): fs.Stats {
  if (typeof path !== 'string' || path === '') throw new InvalidArgumentError('path', 'a history file path', path);
  let stat: fs.Stats;
  try {
    stat = fs.statSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT')
      throw new HistoryFileError('not_found', path, 'no such file', { cause: error });
    throw new HistoryFileError('read_failed', path, `cannot read: ${messageOf(error)}`, { cause: error });
  }
  if (stat.isDirectory()) throw new HistoryFileError('read_failed', path, 'is a directory, not a history file');
  return stat;
}

/** A failure to read, as a HistoryFileError (one already is passes through). */
function readFailed(path: string, error: unknown): HistoryFileError {
  if (error instanceof HistoryFileError) return error;
  return new HistoryFileError('read_failed', path, `cannot read: ${messageOf(error)}`, { cause: error });
}
