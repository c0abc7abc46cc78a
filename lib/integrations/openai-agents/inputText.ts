import type { AgentInputItem } from '@openai/agents';

/** The user's message of a run's input: the string, or the text of the last user item. */
export function inputText(input: string | AgentInputItem[]): string {
  if (typeof input === 'string') return input;
  for (let i = input.length - 1; i >= 0; i--) {
    const item = input[i] as { role?: unknown; content?: unknown };
    if (item?.role !== 'user') continue;
    if (typeof item.content === 'string') return item.content;
    if (Array.isArray(item.content))
      return (item.content as { text?: unknown }[]).map((p) => (typeof p?.text === 'string' ? p.text : '')).join('');
  }
  return '';
}
