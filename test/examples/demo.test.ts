import { runDemo } from '../../examples/demo';

describe('examples/demo', () => {
  it('runs its five turns to the outcomes it promises', async () => {
    const lines: string[] = [];
    let t = 0;
    const results = await runDemo({ sleep: async () => undefined, print: (l) => lines.push(l), clock: () => (t += 5) });
    expect(results.map((r) => r.outcome)).toEqual([
      'end_of_turn',
      'end_of_turn',
      'cancelled',
      'error',
      'budget_exceeded',
    ]);
    const out = lines.join('\n');
    expect(out).toContain('RunningTool → Cancelled (forced)  cancelled during RunningTool: user pressed Ctrl-C');
    expect(out).toContain('CheckingGitCommits → RunningAutoformatters  1 new commit: running formatters');
    expect(out).toContain('sendUserMessage failed after 3 attempts: 529 overloaded_error');
    expect(out).toContain('CheckingBudget → BudgetExceeded  budget exceeded: $0.1010 of $0.1000 after 10 LLM calls');
    expect(out).toMatch(/forced: 1 \(cancellations outside CheckingForCancellation\), rejected: 0$/m);
    expect(out).toContain('`npx agent-sm report run.jsonl` for one HTML page');
  });
});
