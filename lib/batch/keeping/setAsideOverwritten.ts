import * as fs from 'node:fs';
import * as path from 'node:path';
import { attemptsBeside } from './attemptNames';
import { sameName } from './assertNoClash';

/**
 * Sets aside a run of the batch `overwriteHistory` writes over: its file `live` becomes
 * `<live>.overwritten` (`.overwritten.2`, … when taken) and the attempts a resume of that batch
 * kept beside it (`<live>.interrupted`, …) go with it, so that a resume of the new batch neither
 * serves their answers nor counts their spend. Nothing is deleted. Does nothing when neither is
 * there. `byFile`: the attempts of each run file of its folder (`attemptsByRunFile`, keyed by
 * `sameName`), when the caller listed the folder once for many runs; else it is listed.
 */
export function setAsideOverwritten(live: string, byFile?: ReadonlyMap<string, readonly string[]>): void {
  const dir = path.dirname(live);
  const beside = (file: string): readonly string[] =>
    byFile === undefined
      ? attemptsBeside(file)
      : (byFile.get(sameName(path.basename(file))) ?? []).map((n) => path.join(dir, n));
  const attempts = beside(live);
  const held = fs.existsSync(live);
  if (!held && attempts.length === 0) return;
  // A name that neither a file nor the attempts of one set aside before hold (a run set aside
  // with its attempts alone leaves no `<aside>` to tell that the name is taken).
  let aside = `${live}.overwritten`;
  for (let n = 2; fs.existsSync(aside) || beside(aside).length > 0; n++) aside = `${live}.overwritten.${n}`;
  for (const attempt of attempts) fs.renameSync(attempt, `${aside}${attempt.slice(live.length)}`);
  if (held) fs.renameSync(live, aside);
}
