/** A tool's or request's JSON text as the value it holds; text that is not JSON stays the text. */
export function parseJsonOrText(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
