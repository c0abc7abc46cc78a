import { escapeControl } from '../internal/escapeControl';

/** How many ids an error lists before `…`. */
const LISTED = 10;

/** Ids as an error lists them: the first ten, escaped, then `…`. */
export function listed(ids: readonly string[]): string {
  const shown = ids.slice(0, LISTED).map(escapeControl).join(', ');
  return ids.length > LISTED ? `${shown}, …` : shown;
}
