/** What OpenAI, Anthropic and the AI SDK's providers accept as a tool name. */
export const PROVIDER_TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * The name each MCP tool gets in the requests: the prefix and the MCP name with every character
 * the providers reject (MCP allows `.`, `/`, spaces in older servers, up to 128 characters) turned
 * into `_`, cut to 64, and made unique with `_2`, `_3`, …. A tool keeps the name it had in
 * `previous`, so a refresh never renames a tool the conversation has already called.
 */
export function providerToolNames(
  mcpNames: readonly string[],
  prefix: string,
  previous: ReadonlyMap<string, string> = new Map(),
): Map<string, string> {
  const names = new Map<string, string>();
  const taken = new Set<string>();
  for (const mcpName of mcpNames) {
    const kept = previous.get(mcpName);
    if (kept !== undefined && !taken.has(kept)) {
      names.set(mcpName, kept);
      taken.add(kept);
    }
  }
  for (const mcpName of mcpNames) {
    if (names.has(mcpName)) continue;
    const base = `${prefix}${mcpName}`.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64) || 'tool';
    let name = base;
    for (let n = 2; taken.has(name); n++) name = `${base.slice(0, 64 - `_${n}`.length)}_${n}`;
    names.set(mcpName, name);
    taken.add(name);
  }
  return names;
}
