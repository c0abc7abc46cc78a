import { runMcpExample } from '../../examples/mcp-agent';

describe('examples/mcp-agent', () => {
  it('runs offline: tools from the MCP server, a cancel the server receives, a tool the server adds', async () => {
    const lines: string[] = [];
    const { turns, serverLog } = await runMcpExample({ print: (l) => lines.push(l), env: {} });
    expect(turns.map((t) => [t.outcome, t.text])).toEqual([
      ['end_of_turn', 'You need milk, eggs, coffee beans. (3 notes in all.)'],
      ['cancelled', undefined],
      ['end_of_turn', 'From the archive: 2025-trip: Oslo in June: book the ferry early'],
    ]);
    expect(serverLog).toEqual([
      expect.stringMatching(/^reindex started \(request (\d+)\)$/),
      expect.stringMatching(/^reindex cancelled by the client \(request \d+\): the user pressed Esc$/),
    ]);
    // The request the server saw cancelled is the one it started.
    expect(serverLog[1]).toContain(serverLog[0]!.match(/\(request \d+\)/)![0]);
    const output = lines.join('\n');
    expect(output).toContain('notes_stats {} → [ok] 3 notes | {"notes":3,"words":17}');
    expect(output).toContain('tools changed: +archive_search');
  }, 30_000);
});
