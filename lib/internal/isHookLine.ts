/**
 * Whether a journal line records a hook's LLM call through its budgeted handle (`ctx.llm` of
 * `compact` or `runTool`): a ledger-only line, not one of the loop's own calls, so readers
 * that count or serve the loop's calls pass it by.
 */
export function isHookLine(line: { operation?: unknown }): boolean {
  return line.operation === 'compact' || line.operation === 'runTool';
}
