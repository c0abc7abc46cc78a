import { PROVIDER_TOOL_NAME, providerToolNames } from '../../../lib/integrations/mcp/providerToolNames';

describe('providerToolNames', () => {
  it('keeps names the providers accept and replaces every other character with _', () => {
    const names = providerToolNames(['read_file', 'notes.read', 'git/log', 'say hi!', 'é'], '');
    expect([...names.values()]).toEqual(['read_file', 'notes_read', 'git_log', 'say_hi_', '_']);
  });

  it('puts the prefix first and cuts to 64 characters', () => {
    const long = 'x'.repeat(100);
    const names = providerToolNames(['read', long], 'fs_');
    expect(names.get('read')).toBe('fs_read');
    expect(names.get(long)).toBe(`fs_${'x'.repeat(61)}`);
  });

  it('makes clashing names unique with _2, _3, …, still within 64 characters', () => {
    const long = 'y'.repeat(70);
    const names = providerToolNames(['a.b', 'a_b', 'a/b', long, `${long}z`], '');
    expect([...names.values()]).toEqual(['a_b', 'a_b_2', 'a_b_3', 'y'.repeat(64), `${'y'.repeat(62)}_2`]);
    for (const name of names.values()) expect(name).toMatch(PROVIDER_TOOL_NAME);
  });

  it('keeps the names a refresh had given before, so a tool is never renamed under the conversation', () => {
    const first = providerToolNames(['a_b'], '');
    // `a.b` arrives first in the new list, but `a_b` keeps its name.
    expect([...providerToolNames(['a.b', 'a_b'], '', first)]).toEqual([
      ['a_b', 'a_b'],
      ['a.b', 'a_b_2'],
    ]);
  });
});
