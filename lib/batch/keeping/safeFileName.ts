import { createHash } from 'node:crypto';

/** Longest name kept before the hash suffix: well under the 255 bytes most file systems allow. */
const MAX_STEM = 100;
// Names Windows reserves whatever the extension: `con.jsonl` and `nul.tar.gz` are the device
// too, so the test applies to the part before the first dot.
const RESERVED = /^(con|prn|aux|nul|com[0-9]|lpt[0-9])$/i;

/**
 * A file name (without extension) for `id` that every common file system accepts: characters
 * outside `[A-Za-z0-9._-]` become `_`, a leading dot (hidden file) or dash (read as an option) too, long ids are cut, and
 * Windows device names are avoided, with or without an extension (`con.txt` becomes `con_.txt-…`). An id that needed none of that is kept as it is; one that
 * was changed gets a short hash of the original, so `a/b` and `a?b` do not both become `a_b`.
 * Pure and deterministic.
 */
export function safeFileName(id: string): string {
  // A leading dot hides the file; a leading dash makes command-line tools read it as an option.
  let stem = id.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^[.-]/, '_');
  const dot = stem.indexOf('.');
  const reserved = RESERVED.test(dot === -1 ? stem : stem.slice(0, dot));
  // Without a dot the hash suffix below is enough (`CON-1a2b3c4d`); with one, the device name
  // would still come first (`con.txt-1a2b3c4d`), so it is changed itself.
  if (reserved && dot !== -1) stem = `${stem.slice(0, dot)}_${stem.slice(dot)}`;
  if (stem.length > MAX_STEM) stem = stem.slice(0, MAX_STEM);
  if (stem === id && stem !== '' && !reserved) return stem;
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
