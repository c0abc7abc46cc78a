/**
 * The TypeScript blocks of the README and the guides (docs/, without the generated docs/api/),
 * with what the HTML comments just above each block say about it:
 *
 * - `<!-- given: … -->` TypeScript the block takes as written before it (imports, `declare const`
 *   of what the prose speaks of: your loop, your tasks), hidden on GitHub; the block is checked
 *   with it in front.
 * - `<!-- runnable -->` the block runs offline as it is (test/docs/codeBlocks.test.ts).
 * - `<!-- fragment -->` the block is not a program (a shape, a sketch): it is not compiled.
 */
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');

export interface DocBlock {
  /** The markdown file, relative to the repository: `docs/batches.md`. */
  file: string;
  /** The line of the opening fence in `file` (1-based). */
  line: number;
  code: string;
  /** The `given` TypeScript, '' when the block has none. */
  given: string;
  runnable: boolean;
  fragment: boolean;
}

/** README.md and every markdown file under docs/ but docs/api/ (TypeDoc's output), sorted. */
export function docFiles(): string[] {
  const docs = (fs.readdirSync(path.join(ROOT, 'docs'), { recursive: true }) as string[])
    .map((f) => `docs/${f.split(path.sep).join('/')}`)
    .filter((f) => f.endsWith('.md') && !f.startsWith('docs/api/'))
    .sort();
  return ['README.md', ...docs];
}

/** The HTML comments standing just above line `index` (blank lines between them allowed). */
function commentsAbove(lines: string[], index: number): string[] {
  const comments: string[] = [];
  let i = index - 1;
  while (i >= 0) {
    if (lines[i]!.trim() === '') {
      i--;
      continue;
    }
    if (!lines[i]!.trimEnd().endsWith('-->')) break;
    let start = i;
    while (start >= 0 && !lines[start]!.trimStart().startsWith('<!--')) start--;
    if (start < 0) break;
    comments.unshift(lines.slice(start, i + 1).join('\n'));
    i = start - 1;
  }
  return comments;
}

/** Every ```ts / ```typescript block of `file` (relative to the repository). */
export function blocksOf(file: string): DocBlock[] {
  const lines = fs.readFileSync(path.join(ROOT, file), 'utf8').split('\n');
  const blocks: DocBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const fence = /^(\s*)```(\w*)/.exec(lines[i]!);
    if (fence === null) continue;
    let end = i + 1;
    while (end < lines.length && !/^\s*```\s*$/.test(lines[end]!)) end++;
    if (end === lines.length) throw new Error(`${file}:${i + 1}: a code block that is never closed`);
    if (fence[2] === 'ts' || fence[2] === 'typescript') {
      const comments = commentsAbove(lines, i);
      const given = comments
        .map((c) => /^<!--\s*given:\s*([\s\S]*?)\s*-->$/.exec(c.trim())?.[1])
        .filter((g) => g !== undefined);
      const indent = fence[1]!.length;
      blocks.push({
        file,
        line: i + 1,
        code: lines
          .slice(i + 1, end)
          .map((l) => l.slice(Math.min(indent, l.length - l.trimStart().length)))
          .join('\n'),
        given: given.join('\n'),
        runnable: comments.some((c) => /^<!--\s*runnable\s*-->$/.test(c.trim())),
        fragment: comments.some((c) => /^<!--\s*fragment\s*-->$/.test(c.trim())),
      });
    }
    i = end;
  }
  return blocks;
}

/** The blocks of every doc file. */
export function docBlocks(): DocBlock[] {
  return docFiles().flatMap(blocksOf);
}
