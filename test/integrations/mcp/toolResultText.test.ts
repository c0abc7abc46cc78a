import { toolResultText } from '../../../lib/integrations/mcp/toolResultText';

describe('toolResultText', () => {
  it('joins text blocks, one per line', () => {
    expect(
      toolResultText({
        content: [
          { type: 'text', text: 'a' },
          { type: 'text', text: 'b' },
        ],
      }),
    ).toEqual({ output: 'a\nb' });
  });

  it('adds structured content as JSON, unless a text block already carries the same value', () => {
    const structuredContent = { count: 3, tags: ['x'] };
    expect(toolResultText({ content: [{ type: 'text', text: 'Three.' }], structuredContent })).toEqual({
      output: 'Three.\n{"count":3,"tags":["x"]}',
    });
    expect(
      toolResultText({ content: [{ type: 'text', text: '{ "tags": ["x"], "count": 3 }' }], structuredContent }),
    ).toEqual({ output: '{ "tags": ["x"], "count": 3 }' });
    expect(toolResultText({ content: [], structuredContent })).toEqual({ output: '{"count":3,"tags":["x"]}' });
  });

  it('names images, audio and resources it cannot pass on as text, with their type and size', () => {
    const result = toolResultText({
      content: [
        { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' },
        { type: 'audio', data: 'A'.repeat(4096), mimeType: 'audio/wav' },
        { type: 'resource_link', uri: 'file:///notes/a.md', name: 'a.md', mimeType: 'text/markdown' },
        { type: 'resource', resource: { uri: 'file:///notes/b.md', text: '# B' } },
        { type: 'resource', resource: { uri: 'file:///b.bin', mimeType: 'application/octet-stream', blob: 'AAAA' } },
        { type: 'hologram' },
      ],
    });
    expect(result.output.split('\n')).toEqual([
      '[image image/png, 8 bytes]',
      '[audio audio/wav, 3.0 KiB]',
      '[resource link a.md file:///notes/a.md (text/markdown)]',
      '[resource file:///notes/b.md]',
      '# B',
      '[resource file:///b.bin, application/octet-stream, 3 bytes]',
      '[hologram content]',
    ]);
  });

  it('marks a result with isError as an error, and says so when it has no text', () => {
    expect(toolResultText({ content: [{ type: 'text', text: 'disk full' }], isError: true })).toEqual({
      output: 'disk full',
      isError: true,
    });
    expect(toolResultText({ content: [], isError: true })).toEqual({
      output: 'the tool reported an error without a message',
      isError: true,
    });
  });

  it('says when a result has no content at all, rather than sending an empty string', () => {
    expect(toolResultText({ content: [] })).toEqual({ output: '(the tool returned no content)' });
  });
});
