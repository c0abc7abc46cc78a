/** The text of the last user message of a prompt (model-level or SDK-level messages), for the history. */
export function lastUserText(prompt: unknown): string {
  if (typeof prompt === 'string') return prompt;
  if (!Array.isArray(prompt)) return '';
  for (let i = prompt.length - 1; i >= 0; i--) {
    const m = prompt[i] as { role?: unknown; content?: unknown };
    if (m?.role !== 'user') continue;
    if (typeof m.content === 'string') return m.content;
    if (Array.isArray(m.content))
      return m.content
        .map((p: { type?: unknown; text?: unknown }) =>
          p?.type === 'text' && typeof p.text === 'string' ? p.text : '',
        )
        .join('');
  }
  return '';
}
