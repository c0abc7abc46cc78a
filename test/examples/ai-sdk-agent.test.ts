import { runExample } from '../../examples/ai-sdk-agent';

describe('examples/ai-sdk-agent', () => {
  it('runs both modes offline to the outcomes it prints', async () => {
    const lines: string[] = [];
    const { turn, history, steps, budget } = await runExample({ print: (l) => lines.push(l) });
    expect(turn.outcome).toBe('end_of_turn');
    expect(turn.usage).toMatchObject({ llmCalls: 3, inputTokens: 2400, outputTokens: 180 });
    expect(history).toContain('LLM requested 2 tool calls: list_files, read_file');
    expect(history).toContain('tools finished (1 with errors)');
    expect(steps).toBe(2);
    expect(budget.usage).toMatchObject({ llmCalls: 2, toolCalls: 1 });
    expect(lines.join('\n')).toContain('budgetFor: 2 steps, then stopped: budget exceeded: 2 of 2 LLM calls');
  });
});
