import { InvalidArgumentError } from '../machine/InvalidArgumentError';
import { VERSION } from '../internal/version';
import type { LineBytes } from './LineBytes';
import type { StoredTable } from './storedTable';

/**
 * Puts a history file's meta line together into `out` (emptied first): JSON.stringify of the
 * meta record, built from parts as bytes, since the table's part, most of the line, is made once
 * per table (see storedTable), not once per file. Throws `InvalidArgumentError` for metadata that
 * cannot be serialized or does not fit in `maxLineBytes`.
 */
export function metaLineBytes(
  out: LineBytes,
  line: { runId: string; startedAt: number; metadata: unknown },
  stored: StoredTable,
  maxLineBytes: number,
): LineBytes {
  const { runId, startedAt, metadata } = line;
  let metadataText: string | undefined;
  try {
    metadataText = metadata === undefined ? undefined : JSON.stringify(metadata);
  } catch {
    throw new InvalidArgumentError('metadata', 'a JSON-serializable value', metadata);
  }
  const head = JSON.stringify({ type: 'meta', version: VERSION, runId, startedAt });
  out.length = 0;
  out.text(head.slice(0, -1));
  out.bytes(stored.tableBytes);
  if (metadataText !== undefined) out.text(`,"metadata":${metadataText}`);
  out.text('}\n');
  if (out.length > maxLineBytes)
    throw new InvalidArgumentError(
      'metadata',
      `a value whose meta line fits in maxLineBytes (${maxLineBytes.toLocaleString('en-US')} bytes, what readers take)`,
      metadata,
    );
  return out;
}
