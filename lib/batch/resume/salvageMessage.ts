import { plural } from '../../internal/text';
import type { Salvaged } from './resumeState';

/** What a resume with `salvage` read past in one run file, for the logger: the file, its skipped lines, why. */
export function salvageMessage(salvaged: Salvaged): string {
  const { file, skippedLines, warnings } = salvaged;
  const why = warnings.length === 0 ? '' : `: ${warnings.join('; ')}`;
  return `resume salvaged ${file}: skipped ${plural(skippedLines.length, 'corrupt line')} (${skippedLines.join(', ')}), what they held is lost${why}`;
}
