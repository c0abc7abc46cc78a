import * as fs from 'node:fs';
import { keptAttempts } from './readResumeJournal';

/**
 * Sets aside a run of the batch `overwriteHistory` writes over: its file `live` becomes
 * `<live>.overwritten` (`.overwritten.2`, … when taken) and the attempts a resume of that batch
 * kept beside it (`<live>.interrupted`, …) go with it, so that a resume of the new batch neither
 * serves their answers nor counts their spend. Nothing is deleted. Does nothing when neither is there.
 */
export function setAsideOverwritten(live: string): void {
  const attempts = keptAttempts(live);
  const held = fs.existsSync(live);
  if (!held && attempts.length === 0) return;
  // A name that neither a file nor the attempts of one set aside before hold (a run set aside
  // with its attempts alone leaves no `<aside>` to tell freeName the name is taken).
  let aside = `${live}.overwritten`;
  for (let n = 2; fs.existsSync(aside) || fs.existsSync(`${aside}.interrupted`); n++)
    aside = `${live}.overwritten.${n}`;
  for (const attempt of attempts) fs.renameSync(attempt.name, `${aside}${attempt.name.slice(live.length)}`);
  if (held) fs.renameSync(live, aside);
}
