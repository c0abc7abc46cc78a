// Small text helpers shared by the formatters, the adapter's descriptions and the CLI.

/** `1 tool call`, `3 tool calls`, `1,204 runs`. */
export function plural(n: number, word: string): string {
  // Small whole numbers need no separators; toLocaleString costs about a microsecond (Intl).
  const count = Number.isInteger(n) && n < 1000 && n > -1000 ? String(n) : n.toLocaleString('en-US');
  return `${count} ${word}${n === 1 ? '' : 's'}`;
}

/** `text`, or its first `max - 1` characters and `…` when it is longer. */
export function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, Math.max(0, max - 1))}…`;
}

/** All runs of white space, line breaks included, as one space: a message fit for one line. */
export function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
