import { runExample } from '../../examples/wrap-existing-loop';

describe('examples/wrap-existing-loop', () => {
  it('keeps the conversation valid under a retry and a cancel: the user message sent once, interrupted calls settled', async () => {
    const lines: string[] = [];
    const { results, history, llm } = await runExample((l) => lines.push(l));
    expect(results.map((r) => r.outcome)).toEqual(['end_of_turn', 'cancelled', 'end_of_turn']);
    // The 529 was retried with the same request: one user message, not two.
    expect(llm.received[0]).toEqual([{ role: 'user', content: 'What files are here?' }]);
    expect(llm.received[1]).toEqual(llm.received[0]);
    expect(history).toEqual([
      { role: 'user', content: 'What files are here?' },
      { role: 'assistant', content: 'Done: What files are here?' },
      { role: 'user', content: 'List the files and search for TODO' },
      {
        role: 'assistant',
        content: 'Let me look.',
        tool_calls: [
          { id: 'call_3a', name: 'list_files' },
          { id: 'call_3b', name: 'slow_search' },
        ],
      },
      { role: 'tool', tool_call_id: 'call_3a', content: 'README.md package.json lib/ test/' },
      { role: 'tool', tool_call_id: 'call_3b', content: 'error: interrupted: user pressed Esc' },
      { role: 'user', content: 'Carry on' },
      { role: 'assistant', content: 'Done: Carry on' },
    ]);
    expect(lines.join('\n')).toContain('Wrapped turn 3: end_of_turn - Done: Carry on');
  });
});
