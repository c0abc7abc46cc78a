import { runAnthropicAgent } from '../../examples/anthropic-agent';
import { runOpenAIAgent } from '../../examples/openai-agent';
import { runOpenAIResponsesAgent } from '../../examples/openai-responses-agent';

// Offline (an empty environment): each example talks to its local protocol server.
describe.each([
  ['examples/openai-agent', runOpenAIAgent],
  ['examples/openai-responses-agent', runOpenAIResponsesAgent],
  ['examples/anthropic-agent', runAnthropicAgent],
] as const)('%s', (_name, run) => {
  it('finds the bug with its three tools, priced from tokens, offline', async () => {
    const lines: string[] = [];
    const result = await run({ print: (l) => lines.push(l), env: {} });
    expect(result.outcome).toBe('end_of_turn');
    expect(result.text).toContain('`a - b`');
    expect(result.usage).toMatchObject({ llmCalls: 4, toolCalls: 3 });
    expect(result.usage.costUsd).toBeGreaterThan(0);
    const out = lines.join('\n');
    expect(out).toMatch(/\(offline\)/);
    expect(out).toContain('RunningTool → CheckingGitCommits');
    expect(out).toContain('llm> Let me look at the project.');
  });
});
