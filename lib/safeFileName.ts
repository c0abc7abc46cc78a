import { createHash } from 'node:crypto';

/** Longest name kept before the hash suffix: well under the 255 bytes most file systems allow. */
const MAX_STEM = 100;
// Names Windows reserves whatever the extension (`con.jsonl` cannot be created there).
const RESERVED = /^(con|prn|aux|nul|com[0-9]|lpt[0-9])$/i;

/**
 * A file name (without extension) for `id` that every common file system accepts: characters
 * outside `[A-Za-z0-9._-]` become `_`, a leading dot (hidden file) too, long ids are cut, and
 * Windows device names are avoided. An id that needed none of that is kept as it is; one that
 * was changed gets a short hash of the original, so `a/b` and `a?b` do not both become `a_b`.
 * Pure and deterministic.
 */
export function safeFileName(id: string): string {
  let stem = id.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\./, '_');
  if (stem.length > MAX_STEM) stem = stem.slice(0, MAX_STEM);
  if (stem === id && stem !== '' && !RESERVED.test(stem)) return stem;
  return `${stem}-${shortHash(id)}`;
}

/**
 * `safeFileName` for a list of ids, made unique even where only case tells two names apart
 * (`Task` and `task` are one file on macOS and Windows): a later clash gets its own hash
 * suffix (and, in the unlikely case that clashes too, a counter). Same order as `ids`.
 */
export function uniqueFileNames(ids: readonly string[]): string[] {
  const taken = new Set<string>();
  return ids.map((id, index) => {
    let name = safeFileName(id);
    if (taken.has(name.toLowerCase())) name = `${name}-${shortHash(`${id}\u0000${index}`)}`;
    const base = name;
    for (let n = 2; taken.has(name.toLowerCase()); n++) name = `${base}-${n}`;
    taken.add(name.toLowerCase());
    return name;
  });
}

function shortHash(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex').slice(0, 8);
}
