import * as fs from 'node:fs';

/** `path`, or `path.2`, `path.3`, …: the first that does not exist yet, so that nothing kept is replaced. */
export function freeName(path: string): string {
  let candidate = path;
  for (let n = 2; fs.existsSync(candidate); n++) candidate = `${path}.${n}`;
  return candidate;
}
