import fs from 'node:fs';

/** A line a reader refused: its number, its text, and why. */
export interface BadLine {
  number: number;
  text: string;
  reason: string;
}

/** A bad line as a message shows it: without its text when it must not be quoted. */
export interface ShownLine {
  number: number;
  text?: string;
  reason: string;
}

/** Where `path` points when it is a symbolic link; undefined for anything else (a missing file is reported by the read). */
export function linkTarget(path: string): string | undefined {
  try {
    return fs.lstatSync(path).isSymbolicLink() ? fs.readlinkSync(path) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A bad line as a message may show it: of a symbolic link (`link`, its target), what was
 * expected and nothing of the line, nor JSON.parse's words, which quote it: the link may point at
 * any file (a key, a password file).
 */
export function unquoted(bad: BadLine, path: string, link: string | undefined): ShownLine {
  if (link === undefined) return bad;
  return {
    number: bad.number,
    reason: `not a history line: expected JSON Lines written by JsonlHistorySink; ${path} is a symbolic link to ${link}, whose content is not shown`,
  };
}
